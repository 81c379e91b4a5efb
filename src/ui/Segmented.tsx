/** A row of toggle buttons of which one is pressed. */
export function Segmented<T extends string>(props: {
  label: string;
  options: { value: T; label: string; title?: string; testId?: string }[];
  value: T;
  onChange: (value: T) => void;
  disabled?: boolean;
}) {
  return (
    <fieldset className="segmented" aria-label={props.label}>
      {props.options.map((o) => (
        <button
          key={o.value}
          type="button"
          title={o.title}
          aria-pressed={props.value === o.value}
          data-testid={o.testId}
          disabled={props.disabled}
          onClick={() => props.onChange(o.value)}
        >
          {o.label}
        </button>
      ))}
    </fieldset>
  );
}
