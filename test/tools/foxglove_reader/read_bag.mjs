// Decode every message of an MCAP file as Foxglove and Lichtblick do: @mcap/core's indexed reader,
// the ros2msg schemas parsed by @foxglove/rosmsg and CDR decoded by @foxglove/rosmsg2-serialization.
// Prints one JSON object: messages per topic, and every (parent, child) frame pair of /tf.
import { open } from 'node:fs/promises';
import { McapIndexedReader } from '@mcap/core';
import { parse } from '@foxglove/rosmsg';
import { MessageReader } from '@foxglove/rosmsg2-serialization';

const handle = await open(process.argv[2], 'r');
const readable = {
  size: async () => BigInt((await handle.stat()).size),
  read: async (offset, length) => {
    const buffer = new Uint8Array(Number(length));
    await handle.read(buffer, 0, Number(length), Number(offset));
    return buffer;
  },
};
const reader = await McapIndexedReader.Initialize({ readable });
const decoders = new Map();
const counts = {};
const frames = new Set();
const truthFrames = new Set();
for await (const message of reader.readMessages()) {
  const channel = reader.channelsById.get(message.channelId);
  let decode = decoders.get(channel.schemaId);
  if (decode === undefined) {
    const schema = reader.schemasById.get(channel.schemaId);
    if (schema.encoding !== 'ros2msg' || channel.messageEncoding !== 'cdr') {
      throw new Error(`${channel.topic}: ${schema.encoding}/${channel.messageEncoding}, not ros2msg/cdr`);
    }
    const definitions = parse(new TextDecoder().decode(schema.data), { ros2: true });
    const messageReader = new MessageReader(definitions);
    decode = (data) => messageReader.readMessage(data);
    decoders.set(channel.schemaId, decode);
  }
  const msg = decode(message.data);
  counts[channel.topic] = (counts[channel.topic] ?? 0) + 1;
  if (channel.topic === '/tf' || channel.topic === '/tf_static') {
    for (const tr of msg.transforms) frames.add(`${tr.header.frame_id} ${tr.child_frame_id}`);
  } else if (channel.topic.startsWith('/truth/') && msg.header) {
    truthFrames.add(msg.header.frame_id);
  }
}
await handle.close();
console.log(JSON.stringify({ profile: reader.header.profile, counts, frames: [...frames].sort(), truthFrames: [...truthFrames] }));
