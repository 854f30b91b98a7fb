import { describe, expect, it } from 'vitest';
import { prettyLine } from './log-pretty.js';

const time = new Date(2026, 10, 26, 9, 5, 7, 42).getTime();

describe('--log-format pretty', () => {
  const pretty = prettyLine(false);

  it('shows a request as method, route, status and latency, then its ids', () => {
    const line = `{"level":30,"time":${time},"pid":1,"hostname":"h","reqId":"req_1","method":"GET","route":"/v1/models/:model","status":200,"ms":1.84,"project":"proj_demo","msg":"request"}\n`;
    expect(pretty(line)).toBe('09:05:07.042 INFO  request GET /v1/models/:model 200 1.84ms reqId=req_1 project=proj_demo\n');
  });

  it('shows an event with its fields as key=value on one line, an error as its type and message', () => {
    const line = JSON.stringify({
      level: 50,
      time,
      pid: 1,
      hostname: 'h',
      event: 'store.unreachable',
      reason: 'postgres unreachable: connect ECONNREFUSED',
      err: { type: 'Error', message: 'boom\nsecond line', stack: 'Error: boom\n    at x' },
      msg: 'the store is unreachable',
    });
    const out = pretty(`${line}\n`);
    expect(out).toBe(
      '09:05:07.042 ERROR the store is unreachable event=store.unreachable reason="postgres unreachable: connect ECONNREFUSED" err="Error: boom\\nsecond line"\n',
    );
    expect(out.trimEnd().split('\n')).toHaveLength(1);
  });

  it('passes a line that is not a JSON object as it is', () => {
    expect(pretty('plain text\n')).toBe('plain text\n');
    expect(pretty('[1,2]\n')).toBe('[1,2]\n');
  });

  it('colours the level only when asked', () => {
    const line = `{"level":40,"time":${time},"msg":"careful"}\n`;
    expect(prettyLine(true)(line)).toContain('\x1b[33mWARN \x1b[0m');
    expect(pretty(line)).toBe('09:05:07.042 WARN  careful\n');
  });
});

describe('--log-format', () => {
  it('is json or pretty; anything else is refused at start', async () => {
    const { logFormatOf } = await import('./log.js');
    expect(logFormatOf('pretty')).toBe('pretty');
    expect(() => logFormatOf('yaml')).toThrow("--log-format must be 'json' or 'pretty', got 'yaml'");
  });
});
