// The Queue service's query parameters: the shared readers of the front door (http/query-params.ts).
export {
  int32Max,
  int64Max,
  integerParam,
  parseInteger,
  requiredParam,
  type IntegerRange,
} from '../http/query-params.js';
