import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './ui/App';
import './ui/app.css';
import { acquisitionStore } from './ui/stores';
import { installTestHook } from './ui/test-hook';
import { acquisitionClient, onWorkerLost } from './workers/remote';

installTestHook(acquisitionStore, acquisitionClient);
// A worker that dies (a crash, memory) is replaced at the next call; the page forgets what it held.
onWorkerLost((message) => acquisitionStore.getState().workerLost(message));
// The worker computes on WebGPU only when the page has it too (a browser without WebGPU, or a page where it
// was switched off, decodes on the CPU). Messages are handled in order, so this precedes any open.
// `?backend=cpu` asks for the CPU path on purpose (tests of other things; comparing the two paths).
const cpuRequested = new URLSearchParams(location.search).get('backend') === 'cpu';
void acquisitionClient().setBackend(navigator.gpu && !cpuRequested ? 'auto' : 'cpu');

const root = document.getElementById('root');
if (!root) throw new Error('index.html has no #root element');
createRoot(root).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
