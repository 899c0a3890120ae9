import { describe, expect, it } from "vitest";
import { parseWrk } from "../../bench/http/wrk.js";

const REPORT = `Running 5s test @ http://127.0.0.1:40123/api/v1/messages?anchor=newest
  1 threads and 16 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     3.91ms  812.33us  21.40ms   91.20%
    Req/Sec     4.10k   210.11     4.40k    80.00%
  Latency Distribution
     50%  812.00us
     75%    4.02ms
     90%    4.51ms
     99%    1.02s
  20412 requests in 5.00s, 10.52GB read
  Socket errors: connect 0, read 2, write 1, timeout 3
  Non-2xx or 3xx responses: 7
Requests/sec:   4081.57
Transfer/sec:      2.10GB
`;

describe("parseWrk", () => {
  it("reads req/s, p50 and p99 in their units, non-2xx answers and socket errors", () => {
    expect(parseWrk(REPORT)).toEqual({ requestsPerSecond: 4082, p50Ms: 0.812, p99Ms: 1020, non2xx: 7, errors: 6 });
  });

  it("counts no errors when wrk prints none, and refuses a report without the figures", () => {
    const clean = REPORT.replace(/ {2}Socket errors.*\n/, "").replace(/ {2}Non-2xx.*\n/, "");
    expect(parseWrk(clean)).toMatchObject({ non2xx: 0, errors: 0 });
    expect(() => parseWrk("unable to connect to 127.0.0.1:1 Connection refused\n")).toThrow(/lacks Requests\/sec/);
  });
});
