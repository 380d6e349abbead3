// The Queue service's query parameters: the shared readers of the front door (http/query-params.ts).
export { integerParam, parseInteger, requiredParam, type IntegerRange } from '../http/query-params.js';
