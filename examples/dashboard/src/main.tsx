import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import 'uplot/dist/uPlot.min.css';
import './styles.css';
import { App } from './App';
import { loadConfig } from './config';

const root = document.getElementById('root');
if (root === null) throw new Error('index.html has no #root');
const config = await loadConfig();
createRoot(root).render(
  <StrictMode>
    <App config={config} />
  </StrictMode>,
);
