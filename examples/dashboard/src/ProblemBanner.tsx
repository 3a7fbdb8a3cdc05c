import type { Problem } from './errors';

export function ProblemBanner({ problem, onRetry }: { problem: Problem; onRetry?: () => void }) {
  return (
    <div className="problem" role="alert" data-code={problem.code}>
      <span>{problem.message}</span>
      {onRetry && problem.code !== 'UNAUTHENTICATED' && (
        <button type="button" onClick={onRetry}>
          Try again
        </button>
      )}
    </div>
  );
}
