import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './ui/App';
import './ui/app.css';
import { acquisitionStore } from './ui/stores';
import { installTestHook } from './ui/test-hook';
import { acquisitionClient } from './workers/remote';

installTestHook(acquisitionStore, acquisitionClient);

const root = document.getElementById('root');
if (!root) throw new Error('index.html has no #root element');
createRoot(root).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
