/** The demo acquisition shipped under public/demo (ARINA layout: a master file and two data shards). */
export const DEMO_FILES = ['demo_master.h5', 'demo_data_000001.h5', 'demo_data_000002.h5'];

/** True unless the page was opened with ?demo=0 (an empty start, e.g. for tests that drop their own files). */
export function demoWanted(search = window.location.search): boolean {
  return new URLSearchParams(search).get('demo') !== '0';
}

export async function fetchDemoFiles(base: string = import.meta.env.BASE_URL): Promise<File[]> {
  return Promise.all(
    DEMO_FILES.map(async (name) => {
      const url = `${base}demo/${name}`;
      const response = await fetch(url);
      // A static server may answer a missing file with the app's index.html (SPA fallback).
      const type = response.headers.get('content-type') ?? '';
      if (!response.ok || type.includes('text/html')) {
        throw new Error(`${url} is not on the server (HTTP ${response.status})`);
      }
      return new File([await response.blob()], name, { type: 'application/x-hdf5' });
    }),
  );
}
