/** One page of the dashboard: its path, title, navigation entry and server-rendered body. */
export interface Page {
  /** path under /dashboard */
  path: string;
  title: string;
  /** shown in the navigation (absent: not in the navigation) */
  nav?: string;
  body: string;
}
