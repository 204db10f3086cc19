import type { Context, ObjectContext, RestatePromise } from '@restatedev/restate-sdk';
import { inboxKey, INBOX_PREFIX, type InboxItem } from './protocol.js';
import type { RestateSdk } from './sdk.js';

/**
 * The session's inbox: the same virtual object under the key `~inbox~<sessionId>`, so its exclusive
 * handlers never wait for the session's long `prompt`. Shared handlers cannot write state; they push
 * here, and the run takes what was pushed. Push and take are exclusive on the inbox key, so a push
 * either finds the run's registered awakeable (and resolves it) or leaves the item for the next take:
 * nothing is lost and no wake-up is missed. While no run is open, items wait for the next `prompt`.
 */
interface InboxState {
  items: InboxItem[];
  open: boolean;
  /** The awakeable of a run waiting for the next item. */
  waiter: string | null;
}

async function readInbox(ctx: ObjectContext, sdk: RestateSdk): Promise<InboxState> {
  if (!ctx.key.startsWith(INBOX_PREFIX))
    throw new sdk.TerminalError(`InvalidInput: "${ctx.key}" is not an inbox key`, { errorCode: 400 });
  return (await ctx.get<InboxState>('inbox')) ?? { items: [], open: false, waiter: null };
}

/**
 * The inbox's handlers. They are plumbing between the object's own handlers: private to ingress in
 * the deployment's manifest (only other handlers call them), so no client can push or take items.
 */
export function inboxHandlers(sdk: RestateSdk) {
  const internal = { ingressPrivate: true };
  const exclusive = sdk.handlers.object.exclusive;
  return {
    /** The run starts: what was pushed while no run was open; when nothing was, `wake` is resolved by the next push. */
    inboxOpen: exclusive(internal, async (ctx: ObjectContext, input: { wake: string }): Promise<InboxItem[]> => {
      const inbox = await readInbox(ctx, sdk);
      ctx.set('inbox', {
        items: [],
        open: true,
        waiter: inbox.items.length > 0 ? null : input.wake,
      } satisfies InboxState);
      return inbox.items;
    }),
    /**
     * The run ended (sent one-way): what it did not take stays here for the next run, and whoever
     * waits on a receipt learns the message is still queued.
     */
    inboxClose: exclusive(internal, async (ctx: ObjectContext): Promise<void> => {
      const inbox = await readInbox(ctx, sdk);
      for (const item of inbox.items) answerStillQueued(ctx, item);
      ctx.set('inbox', { items: inbox.items.map(withoutReceipt), open: false, waiter: null } satisfies InboxState);
    }),
    inboxPush: exclusive(internal, async (ctx: ObjectContext, item: InboxItem): Promise<{ live: boolean }> => {
      const inbox = await readInbox(ctx, sdk);
      if (inbox.waiter) ctx.resolveAwakeable(inbox.waiter, null);
      // While no run is open the sender is answered at once: nobody will wait on the receipt.
      ctx.set('inbox', {
        items: [...inbox.items, inbox.open ? item : withoutReceipt(item)],
        open: inbox.open,
        waiter: null,
      } satisfies InboxState);
      return { live: inbox.open };
    }),
    /** Everything pushed so far; when there is nothing, `wake` is resolved by the next push. */
    inboxTake: exclusive(internal, async (ctx: ObjectContext, input: { wake: string }): Promise<InboxItem[]> => {
      const inbox = await readInbox(ctx, sdk);
      ctx.set('inbox', {
        items: [],
        open: inbox.open,
        waiter: inbox.items.length > 0 ? null : input.wake,
      } satisfies InboxState);
      return inbox.items;
    }),
  };
}

function answerStillQueued(ctx: ObjectContext, item: InboxItem): void {
  if ((item.kind === 'steer' || item.kind === 'followUp') && item.receipt !== '')
    ctx.resolveAwakeable(item.receipt, { status: 'stillQueued' });
}

function withoutReceipt(item: InboxItem): InboxItem {
  return item.kind === 'steer' || item.kind === 'followUp' ? { ...item, receipt: '' } : item;
}

/** Calls into the inbox of `sessionId` from any handler of the object `objectName`. */
export function inboxClient(sdk: RestateSdk, ctx: Context, objectName: string, sessionId: string) {
  const call = <I, O>(method: string, parameter: I): RestatePromise<O> =>
    ctx.genericCall<I, O>({
      service: objectName,
      method,
      key: inboxKey(sessionId),
      parameter,
      inputSerde: sdk.serde.json as never,
      outputSerde: sdk.serde.json as never,
    });
  return {
    open: (wake: string) => call<{ wake: string }, InboxItem[]>('inboxOpen', { wake }),
    close: () => {
      ctx.genericSend<null>({
        service: objectName,
        method: 'inboxClose',
        key: inboxKey(sessionId),
        parameter: null,
        inputSerde: sdk.serde.json as never,
      });
    },
    push: (item: InboxItem) => call<InboxItem, { live: boolean }>('inboxPush', item),
    take: (wake: string) => call<{ wake: string }, InboxItem[]>('inboxTake', { wake }),
  };
}
