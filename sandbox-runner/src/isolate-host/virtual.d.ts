/** capnweb bundled as an IIFE (defines global `capnweb`); provided by scripts/build-isolate-host.mjs. */
declare module "virtual:capnweb-iife" {
  const source: string;
  export default source;
}
