import { suiteTest } from './suite-test.js';

suiteTest('reentrant');
