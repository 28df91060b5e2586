/**
 * Encodings: event payloads, plain packing, session frames, I/O batches, the native transcoder,
 * and the call channel between threads.
 * One test process runs the modules of test/unit/codecs/ (`npx ava test/unit/codecs.test.ts
 * --match '*words*'` runs some).
 */
import './codecs/call-channel.ts';
import './codecs/event-codec.ts';
import './codecs/io-batch.ts';
import './codecs/native-transcode.ts';
import './codecs/plain-pack.ts';
import './codecs/session-codec.ts';
