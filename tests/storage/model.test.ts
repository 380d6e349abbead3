// The model store of the model test passes the conformance suite itself: the suite and the model
// vouch for each other before either judges an engine.
import { ModelStore } from './conformance/model.js';
import { runStoreConformance } from './conformance/suite.js';

runStoreConformance(
  'model store',
  async () => {
    const store = new ModelStore({ stepRowsMax: 16, stepExamineMax: 20 });
    return { store, close: () => store.close() };
  },
  {
    skip: {
      'after reopening: every acknowledged table, entity, version and setting, and later versions':
        'the model lives in memory only',
    },
  },
);
