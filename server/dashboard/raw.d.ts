/** Files imported as text (`?raw`), inlined by the bundler. */
declare module "*?raw" {
  const text: string;
  export default text;
}
