/**
 * A small writer of the Prometheus text format (0.0.4): families with HELP and TYPE lines,
 * samples with escaped label values, and histograms from per-bucket counts.
 */
import { wellFormed } from '../../text.ts';

export type MetricType = 'counter' | 'gauge' | 'histogram';
export type Labels = Record<string, string>;

/**
 * Escapes a label value (backslash, double quote, line feed). An unpaired surrogate becomes
 * U+FFFD: the format is UTF-8, and Prometheus refuses a label value that is not.
 */
export function escapeLabel(v: string): string {
  return wellFormed(v).replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

function escapeHelp(v: string): string {
  return wellFormed(v).replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}

/** A sample value as the text format writes it. */
export function formatValue(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Infinity) return '+Inf';
  if (v === -Infinity) return '-Inf';
  return String(v);
}

function labelText(labels: Labels): string {
  const parts = Object.entries(labels).map(([k, v]) => `${k}="${escapeLabel(v)}"`);
  return parts.length === 0 ? '' : `{${parts.join(',')}}`;
}

/** Collects families in the order they are first declared; a family without samples is left out. */
export class Exposition {
  private readonly families = new Map<string, { type: MetricType; help: string; lines: string[] }>();

  /** Declares a family (again: a no-op) so that samples can be added to it. */
  family(name: string, type: MetricType, help: string): void {
    if (!this.families.has(name)) this.families.set(name, { type, help, lines: [] });
  }

  /** Adds one sample to a counter or gauge family declared before. */
  sample(name: string, labels: Labels, value: number): void {
    this.lines(name).push(`${name}${labelText(labels)} ${formatValue(value)}`);
  }

  /**
   * Adds one histogram: `buckets` holds a count per bound plus one for values above every bound
   * (not cumulative); `_bucket` lines are cumulative, ending with `le="+Inf"`, then `_sum` and `_count`.
   */
  histogram(name: string, labels: Labels, bounds: readonly number[], buckets: readonly number[], sum: number): void {
    const out = this.lines(name);
    let cumulative = 0;
    for (let i = 0; i < buckets.length; i++) {
      cumulative += buckets[i]!;
      const le = i < bounds.length ? formatValue(bounds[i]!) : '+Inf';
      out.push(`${name}_bucket${labelText({ ...labels, le })} ${cumulative}`);
    }
    out.push(`${name}_sum${labelText(labels)} ${formatValue(sum)}`, `${name}_count${labelText(labels)} ${cumulative}`);
  }

  /** The whole text, ending with a line feed. */
  text(): string {
    const out: string[] = [];
    for (const [name, f] of this.families) {
      if (f.lines.length === 0) continue;
      out.push(`# HELP ${name} ${escapeHelp(f.help)}`, `# TYPE ${name} ${f.type}`, ...f.lines);
    }
    return out.length === 0 ? '' : out.join('\n') + '\n';
  }

  private lines(name: string): string[] {
    const f = this.families.get(name);
    if (!f) throw new Error(`metric family ${name} was not declared`);
    return f.lines;
  }
}
