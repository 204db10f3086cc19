import { studioCost } from './bench/studio.ts';
const r = await studioCost(200, 1, 9, 2);
console.log(r.modes.off.median, r.modes.attached.median, r.modes.watched.median, r.ratio, r.cpuRatio, r.bytesPerRun);
