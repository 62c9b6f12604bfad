// Turns the baseline's and the package's CPU profiles into the tables RESULTS.md shows: where the
// package's extra time per request goes, by area and by frame.
import type { ProfileSummary } from './cpu-profile';
import { table } from './report';

const usOf = (list: readonly { name: string; usPerRequest: number }[], name: string): number =>
  list.find((item) => item.name === name)?.usPerRequest ?? 0;

const signed = (value: number): string => `${value >= 0 ? '+' : ''}${value.toFixed(1)}`;

/** Total sampled CPU per request (idle excluded), in µs. */
export const cpuPerRequest = (summary: ProfileSummary): number =>
  summary.areas.reduce((sum, area) => sum + area.usPerRequest, 0);

/** Markdown: CPU per request by area, the frames the package adds, and its own frames. */
export function profileTables(
  baseline: ProfileSummary,
  pkg: ProfileSummary,
  topCount = 15,
  /** What `pkg` is, in the column headers. */
  label = 'package',
): string[] {
  const areaNames = [...new Set([...pkg.areas, ...baseline.areas].map((area) => area.name))];
  const areaRows = areaNames
    .map((name) => ({ name, base: usOf(baseline.areas, name), pkg: usOf(pkg.areas, name) }))
    .sort((a, b) => b.pkg - b.base - (a.pkg - a.base))
    .filter((row) => row.base >= 0.5 || row.pkg >= 0.5);
  const frameAreas = new Map(
    [...baseline.frames, ...pkg.frames].map((frame) => [frame.name, frame.area]),
  );
  const grown = [...frameAreas.keys()]
    .map((name) => ({ name, base: usOf(baseline.frames, name), pkg: usOf(pkg.frames, name) }))
    .sort((a, b) => b.pkg - b.base - (a.pkg - a.base))
    .slice(0, topCount);
  const own = pkg.frames.filter((frame) => frame.area.startsWith('express-platform-login'));
  return [
    'Self time per request by area (µs; V8 sampling profiler every 100 µs, two saturated windows of 5 s per app, the apps in turn, idle excluded):',
    '',
    ...table(
      ['area', 'baseline µs/req', `${label} µs/req`, `added by the ${label}`],
      [
        ...areaRows.map((row) => [
          row.name,
          row.base.toFixed(1),
          row.pkg.toFixed(1),
          signed(row.pkg - row.base),
        ]),
        [
          '**total**',
          cpuPerRequest(baseline).toFixed(1),
          cpuPerRequest(pkg).toFixed(1),
          `**${signed(cpuPerRequest(pkg) - cpuPerRequest(baseline))}**`,
        ],
      ],
    ),
    '',
    `The ${topCount} frames whose self time grows most with the ${label} (µs per request):`,
    '',
    ...table(
      ['frame', 'area', 'baseline', label, 'added'],
      grown.map((row) => [
        `\`${row.name}\``,
        frameAreas.get(row.name) ?? '',
        row.base.toFixed(1),
        row.pkg.toFixed(1),
        signed(row.pkg - row.base),
      ]),
    ),
    '',
    "Self time in the package's own code (dist/, the build; functions the optimiser inlined count in their caller):",
    '',
    ...table(
      ['frame', 'µs/req'],
      own.map((frame) => [`\`${frame.name}\``, frame.usPerRequest.toFixed(1)]),
    ),
  ];
}
