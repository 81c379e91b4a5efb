import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './ui/App';
import './ui/app.css';
import { acquisitionStore } from './ui/stores';
import { installTestHook } from './ui/test-hook';
import { acquisitionClient } from './workers/remote';

installTestHook(acquisitionStore, acquisitionClient);
// The worker computes on WebGPU only when the page has it too (a browser without WebGPU, or a page where it
// was switched off, decodes on the CPU). Messages are handled in order, so this precedes any open.
void acquisitionClient().setBackend(navigator.gpu ? 'auto' : 'cpu');

const root = document.getElementById('root');
if (!root) throw new Error('index.html has no #root element');
createRoot(root).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
