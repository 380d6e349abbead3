// How much of the randomized property and differential runs to do. CERULEAN_TEST_SCALE is a factor
// on their iteration counts: unset (1) for the full runs `npm test` makes, 0.1 in `npm run test:unit`
// (the quick tier), more than 1 for a deeper hunt. Seeds do not change with it, only how far each run goes.
const scaleVariable = 'CERULEAN_TEST_SCALE';

function parseScale(text: string | undefined): number {
  if (text === undefined || text === '') return 1;
  const scale = Number(text);
  if (!(scale > 0) || !Number.isFinite(scale))
    throw new Error(`${scaleVariable}=${text}: a positive number is expected`);
  return scale;
}

export const testScale = parseScale(process.env[scaleVariable]);

/** `count` iterations at the current scale: at least `floor`, so the run still proves something. */
export function scaled(count: number, floor = 1): number {
  return Math.max(floor, Math.round(count * testScale));
}
