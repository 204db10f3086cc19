import { suiteTest } from './suite-test.js';

suiteTest('tools');
