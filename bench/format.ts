// How the reports write numbers.

export function opsPerSec(value: number): string {
  return value >= 100 ? Math.round(value).toLocaleString('en-US') : value.toFixed(value >= 10 ? 1 : 2);
}

export function ratio(value: number | undefined): string {
  return value === undefined ? '–' : `${value.toFixed(2)}×`;
}

export function milliseconds(value: number): string {
  return value >= 100 ? Math.round(value).toString() : value.toPrecision(2);
}
