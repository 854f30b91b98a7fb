// prom-client's class files (src/metrics/prom.ts): each exports its class; the types are the package's.
declare module 'prom-client/lib/counter.js' {
  const value: unknown;
  export default value;
}
declare module 'prom-client/lib/gauge.js' {
  const value: unknown;
  export default value;
}
declare module 'prom-client/lib/histogram.js' {
  const value: unknown;
  export default value;
}
declare module 'prom-client/lib/registry.js' {
  const value: unknown;
  export default value;
}
