// The demo needs the master machine and createAgent, which are not built yet.
console.log('agentchart demo: not built yet — the session runtime (master machine) is still under construction.');
