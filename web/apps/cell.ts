// A value the page's components follow: set() re-renders every component that read it with useCell().
import { useEffect, useReducer, useRef } from 'preact/hooks';

/** One piece of page state with subscribers. */
export class Cell<T> {
  private listeners = new Set<() => void>();
  constructor(private value: T) {}
  get(): T {
    return this.value;
  }
  set(value: T) {
    this.value = value;
    for (const l of [...this.listeners]) l();
  }
  update(fn: (v: T) => T) {
    this.set(fn(this.value));
  }
  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

/** Reads a cell and re-renders the component when it changes. */
export function useCell<T>(cell: Cell<T>): T {
  const [, bump] = useReducer((n: number) => n + 1, 0);
  const value = cell.get();
  // What this render showed: a change between the render and the subscription re-renders too.
  const shown = useRef(value);
  shown.current = value;
  useEffect(() => {
    const off = cell.subscribe(() => bump(0));
    if (cell.get() !== shown.current) bump(0);
    return off;
  }, [cell]);
  return value;
}
