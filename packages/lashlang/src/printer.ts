export function printProgram(): string {
  return "";
}
export function printExpr(): string {
  return "";
}
