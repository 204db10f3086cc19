import { suiteTest } from './suite-test.js';

suiteTest('queues');
