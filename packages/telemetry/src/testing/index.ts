/** Test helpers: a real Jaeger (OTLP receiver + query API) built by scripts/build-jaeger.sh. */
export { type Jaeger, type JaegerSpan, jaegerBinary, startJaeger } from "./jaeger.ts";
