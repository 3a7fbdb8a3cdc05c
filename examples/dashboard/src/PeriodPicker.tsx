// A period of the schema, or a custom range of days.
import { useState } from 'react';
import { PERIODS, type Range, isPeriod } from './periods';

const CUSTOM = 'CUSTOM';

export function PeriodPicker({ range, onChange }: { range: Range; onChange: (range: Range) => void }) {
  const [custom, setCustom] = useState(() => ('from' in range ? range : { from: '', to: '' }));
  const [choice, setChoice] = useState<string>('period' in range ? range.period : CUSTOM);
  return (
    <>
      <label>
        Period
        <select
          name="period"
          value={choice}
          onChange={(event) => {
            const value = event.target.value;
            setChoice(value);
            if (isPeriod(value)) onChange({ period: value });
          }}
        >
          {Object.entries(PERIODS).map(([period, label]) => (
            <option key={period} value={period}>
              {label}
            </option>
          ))}
          <option value={CUSTOM}>Custom range…</option>
        </select>
      </label>
      {choice === CUSTOM && (
        <form
          className="custom"
          onSubmit={(event) => {
            event.preventDefault();
            if (custom.from !== '' && custom.to !== '') onChange(custom.from <= custom.to ? custom : { from: custom.to, to: custom.from });
          }}
        >
          <label>
            From
            <input name="from" type="date" value={custom.from} onChange={(event) => setCustom({ ...custom, from: event.target.value })} />
          </label>
          <label>
            To
            <input name="to" type="date" value={custom.to} onChange={(event) => setCustom({ ...custom, to: event.target.value })} />
          </label>
          <button type="submit">Show</button>
        </form>
      )}
    </>
  );
}
