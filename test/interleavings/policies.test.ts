import { suiteTest } from './suite-test.js';

suiteTest('policies');
