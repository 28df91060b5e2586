/** Benchmark output: a human table, then one JSON line with figures, baselines and ratios. */
export interface BenchRow {
  label: string;
  value: number;
  unit: string;
}

export function printReport(name: string, rows: BenchRow[], json: Record<string, unknown>): void {
  const width = Math.max(...rows.map((r) => r.label.length));
  process.stdout.write(`\n${name}\n${'-'.repeat(width + 24)}\n`);
  for (const r of rows) {
    const value = r.unit === 'x' || r.unit === '%' || r.unit === 'µs/msg' || r.unit === 'reruns/event' ? r.value.toFixed(2) : Math.round(r.value).toLocaleString('en-US');
    process.stdout.write(`${r.label.padEnd(width)}  ${value.padStart(14)} ${r.unit}\n`);
  }
  process.stdout.write(`${JSON.stringify({ bench: name, ...json })}\n`);
}
