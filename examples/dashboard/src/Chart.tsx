// A line chart of daily figures with uPlot (canvas). Previous-period series are drawn on the current
// period's days, day i against day i, dashed.
import { useEffect, useRef } from 'react';
import uPlot from 'uplot';

export interface ChartSeries {
  label: string;
  /** One value per date; undefined while it loads. */
  values: number[] | undefined;
  color: string;
  dashed?: boolean;
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

  // biome-ignore lint/correctness/useExhaustiveDependencies: redrawn when the figures change, not on each render.
  useEffect(() => {
    const element = box.current;
    if (element === null) return;
    const chart = new uPlot(
      {
        width: element.clientWidth,
        height: 280,
        tzDate: (seconds) => uPlot.tzDate(new Date(seconds * 1000), 'Etc/UTC'),
        scales: { x: { time: true } },
        axes: [{}, { size: 60 }],
        legend: { live: false },
        series: [
          { label: 'Day' },
          ...shown.map((line) => ({ label: line.label, stroke: line.color, width: 2, ...(line.dashed ? { dash: [6, 4] } : {}) })),
        ],
        hooks: {
          draw: [
            () => {
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
