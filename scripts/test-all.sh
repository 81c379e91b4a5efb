#!/usr/bin/env bash
# Every test tier, in order of cost: types, lint, Node unit + GPU (Dawn on SwiftShader) tests, e2e in chromium.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/gpu-env.sh
echo "== typecheck"; npx tsc --noEmit -p tsconfig.json
echo "== lint"; npx biome check .
echo "== fixtures"; /usr/bin/python3 scripts/make_fixtures.py --check
echo "== unit + gpu (vitest)"; npx vitest run
echo "== e2e (playwright + chromium + WebGPU)"; npx vite build --logLevel warn && npx playwright test
