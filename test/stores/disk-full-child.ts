// The disk-full session in a process whose file size is limited (`ulimit -f`), where no small
// filesystem can be mounted: prints its report as the last line.
import { fillTheDisk } from './disk-full.js';

const dir = process.env.AGENTCHART_DISK_FULL_DIR;
if (!dir) throw new Error('AGENTCHART_DISK_FULL_DIR is not set');
console.log(JSON.stringify(await fillTheDisk(dir)));
