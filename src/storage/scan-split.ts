// When a filtered scan's steps run on two scan threads at once (SQLite on disk): an engine
// setting the server's flags choose (--scan-split).
export const scanSplits = ['auto', 'always', 'never'] as const;
export type ScanSplit = (typeof scanSplits)[number];
