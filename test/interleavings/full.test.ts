import { suiteTest } from './suite-test.js';

suiteTest('full');
