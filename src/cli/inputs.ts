import type { InputFile } from '../source/input-file';
import { nodeInput } from '../source/node-input';

/** Opens every path as an InputFile; closes those already opened if one fails. */
export async function openInputs(paths: string[]): Promise<InputFile[]> {
  const inputs: InputFile[] = [];
  try {
    for (const path of paths) inputs.push(await nodeInput(path));
  } catch (e) {
    await closeInputs(inputs);
    throw e;
  }
  return inputs;
}

export async function closeInputs(inputs: InputFile[]): Promise<void> {
  await Promise.all(inputs.map((i) => i.close?.()));
}
