// A line chart of daily figures with uPlot (canvas). Previous-period series are drawn on the current
// period's days, day i against day i, dashed. The axis spans the period's days (a single day is that
// day, its points drawn) and ticks whole days at least: the data has no finer grain.
import { useEffect, useRef } from 'react';
import uPlot from 'uplot';

export interface ChartSeries {
  label: string;
  /** One value per date; undefined while it loads. */
  values: number[] | undefined;
  color: string;
  dashed?: boolean;
}

const DAY = 86_400;
const HALF_DAY = DAY / 2;
/** Tick spacings in seconds: a day, some days, weeks, months, quarters, years; never less than a day. */
const DAY_INCREMENTS = [1, 2, 7, 14, 30, 61, 91, 182, 365].map((days) => days * DAY);

const labels = {
  day: new Intl.DateTimeFormat('en-US', { month: 'short', day: 'numeric', timeZone: 'UTC' }),
  month: new Intl.DateTimeFormat('en-US', { month: 'short', year: 'numeric', timeZone: 'UTC' }),
  year: new Intl.DateTimeFormat('en-US', { year: 'numeric', timeZone: 'UTC' }),
};

/** A tick's label for the spacing of the ticks (both in seconds). */
function tickLabel(seconds: number, increment: number): string {
  const date = new Date(seconds * 1000);
  if (increment >= 365 * DAY) return labels.year.format(date);
  if (increment >= 30 * DAY) return labels.month.format(date);
  return labels.day.format(date);
}

/** Marked once, when the first chart with data is on the screen, as real-user monitoring would. */
let firstChartMarked = false;

export function Chart({ dates, series }: { dates: string[]; series: ChartSeries[] }) {
  const box = useRef<HTMLDivElement>(null);
  const shown = series.filter((line) => line.values !== undefined);
  const data: uPlot.AlignedData = [
    dates.map((date) => Date.parse(`${date}T00:00:00Z`) / 1000),
    ...shown.map((line) => (line.values ?? []).slice(0, dates.length)),
  ];

  const first = Date.parse(`${dates[0] ?? '1970-01-01'}T00:00:00Z`) / 1000;
  const last = Date.parse(`${dates.at(-1) ?? '1970-01-01'}T00:00:00Z`) / 1000;
  const span: [number, number] = first === last ? [first - HALF_DAY, last + HALF_DAY] : [first, last];

  // biome-ignore lint/correctness/useExhaustiveDependencies: redrawn when the figures change, not on each render.
  useEffect(() => {
    const element = box.current;
    if (element === null) return;
    const chart = new uPlot(
      {
        width: element.clientWidth,
        height: 280,
        tzDate: (seconds) => uPlot.tzDate(new Date(seconds * 1000), 'Etc/UTC'),
        // The period's days, whatever the data: uPlot would widen a single point's axis to years.
        scales: { x: { time: true, range: () => span } },
        axes: [
          {
            incrs: DAY_INCREMENTS,
            // Days as "Mar 9", months as "Mar 2026", years as "2026"; the ticks and their spacing are also
            // written on the element, where a test reads them.
            values: (_chart, splits, _axis, _space, increment) => {
              element.dataset.ticks = splits.join(' ');
              element.dataset.tickDays = String(increment / DAY);
              return splits.map((seconds) => tickLabel(seconds, increment));
            },
          },
          { size: 60 },
        ],
        legend: { live: false },
        series: [
          { label: 'Day' },
          ...shown.map((line) => ({
            label: line.label,
            stroke: line.color,
            width: 2,
            points: { show: dates.length <= 31 },
            ...(line.dashed ? { dash: [6, 4] } : {}),
          })),
        ],
        hooks: {
          draw: [
            (drawn) => {
              element.dataset.xMin = String(drawn.scales.x?.min);
              element.dataset.xMax = String(drawn.scales.x?.max);
              if (firstChartMarked || dates.length === 0) return;
              firstChartMarked = true;
              performance.mark('dashboard:first-chart');
            },
          ],
        },
      },
      data,
      element,
    );
    const resize = new ResizeObserver(() => chart.setSize({ width: element.clientWidth, height: 280 }));
    resize.observe(element);
    return () => {
      resize.disconnect();
      chart.destroy();
    };
  }, [JSON.stringify(data)]);

  return <div className="chart" ref={box} role="img" aria-label={`Chart: ${shown.map((line) => line.label).join(', ')}`} />;
}
