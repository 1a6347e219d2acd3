// A replay's steps, fetched in pages from the gateway and kept: the position on screen and
// its neighbours are always here before they are needed, so a step is a lookup.

import { replayJson } from "./api.js";

const PAGES_KEPT = 24; // about 5 MB of states; pages far from the position are dropped first

export class Timeline {
  constructor(tableId, summary) {
    this.tableId = tableId;
    this.size = summary.page_size;
    this.steps = summary.steps;
    this.pages = new Map(); // page start -> {steps} when loaded
    this.loading = new Map(); // page start -> Promise
  }

  startOf(step) {
    return step - (step % this.size);
  }

  entry(step) {
    const page = this.pages.get(this.startOf(step));
    return page ? page.steps[step - this.startOf(step)] || null : null;
  }

  lastState() {
    const last = this.entry(this.steps - 1);
    return last ? last.state : {};
  }

  ensure(step) {
    const start = this.startOf(Math.max(0, Math.min(this.steps - 1, step)));
    if (this.pages.has(start)) return Promise.resolve(this.pages.get(start));
    if (!this.loading.has(start)) {
      const url = `/api/replays/${encodeURIComponent(this.tableId)}/steps?start=${start}`;
      const request = replayJson(url).then((body) => {
        this.pages.set(start, body);
        this.forget(start);
        return body;
      }).finally(() => this.loading.delete(start));
      this.loading.set(start, request);
    }
    return this.loading.get(start);
  }

  // The pages on both sides of `step`, fetched in the background.
  prefetch(step) {
    for (const near of [step + this.size, step - this.size, step + 2 * this.size]) {
      if (near >= 0 && near < this.steps) this.ensure(near).catch(() => {});
    }
  }

  forget(keep) {
    if (this.pages.size <= PAGES_KEPT) return;
    const last = this.startOf(this.steps - 1);
    const far = [...this.pages.keys()].filter((s) => s !== 0 && s !== last)
      .sort((a, b) => Math.abs(b - keep) - Math.abs(a - keep));
    while (this.pages.size > PAGES_KEPT && far.length) this.pages.delete(far.shift());
  }

  // The events of up to `count` steps before `step` (those loaded), in order.
  eventsBefore(step, count) {
    const out = [];
    for (let s = Math.max(0, step - count); s < step; s++) {
      const entry = this.entry(s);
      if (entry) out.push(...entry.events);
    }
    return out;
  }
}
