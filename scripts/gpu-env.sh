# Sourced: points Dawn (npm `webgpu`) at a software Vulkan driver when no other is chosen.
if [ -z "${VK_ICD_FILENAMES:-}" ] && [ -f /usr/lib/chromium/vk_swiftshader_icd.json ]; then
  export VK_ICD_FILENAMES=/usr/lib/chromium/vk_swiftshader_icd.json
fi
export NODEVICE_SELECT=1
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-/tmp}"
