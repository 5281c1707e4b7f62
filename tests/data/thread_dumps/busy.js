function spin(n) { let a = 1; for (let i = 0; i < n; i++) a = (a * 1664525 + 1013904223) % 4294967296; return a; }
function workA() { return spin(200000) + 1; }
function workB() { return spin(100000) + 2; }
const run = (ms) => { const end = Date.now() + ms; let s = 0; while (Date.now() < end) { s += workA(); s += workB(); s += [3, 1, 2].map((x) => spin(x * 1000)).length; } return s; };
setTimeout(() => { console.log(run(300)); }, 50);
