import type { ActorSystem, AnyActorRef, PromiseActorLogic } from 'xstate';

const DONE = 'agentchart.effect.done';
const FAILED = 'agentchart.effect.failed';
const STOP = 'xstate.stop';

interface EffectSnapshot<TOutput, TInput> {
  status: 'active' | 'done' | 'error' | 'stopped';
  output: TOutput | undefined;
  error: unknown;
  input: TInput | undefined;
}

type EffectEvent<TOutput> =
  { type: typeof DONE; output: TOutput } | { type: typeof FAILED; error: unknown } | { type: string };

/**
 * An effect that computes its output at once (preprocessing, the custom partition): an actor like
 * XState's promise actors, whose done event still arrives as the next step of its parent (after
 * whatever is already in the parent's mailbox, e.g. a steer sent in the step that started it), but
 * without a promise and a microtask per call.
 */
export function fromSync<TOutput, TInput>(
  compute: (args: { input: TInput; system: ActorSystem<any>; self: AnyActorRef }) => TOutput,
): PromiseActorLogic<TOutput, TInput> {
  const logic = {
    config: compute,
    transition: (
      snapshot: EffectSnapshot<TOutput, TInput>,
      event: EffectEvent<TOutput>,
    ): EffectSnapshot<TOutput, TInput> => {
      if (snapshot.status !== 'active') return snapshot;
      if (event.type === DONE)
        return { ...snapshot, status: 'done', output: (event as { output: TOutput }).output, input: undefined };
      if (event.type === FAILED)
        return { ...snapshot, status: 'error', error: (event as { error: unknown }).error, input: undefined };
      if (event.type === STOP) return { ...snapshot, status: 'stopped', input: undefined };
      return snapshot;
    },
    start: (
      snapshot: EffectSnapshot<TOutput, TInput>,
      { self, system }: { self: AnyActorRef; system: ActorSystem<any> },
    ) => {
      if (snapshot.status !== 'active') return;
      // Sent to itself before its mailbox opens: processed as the actor starts, then relayed to the parent.
      try {
        self.send({ type: DONE, output: compute({ input: snapshot.input as TInput, system, self }) });
      } catch (error) {
        self.send({ type: FAILED, error });
      }
    },
    getInitialSnapshot: (_scope: unknown, input: TInput): EffectSnapshot<TOutput, TInput> => ({
      status: 'active',
      output: undefined,
      error: undefined,
      input,
    }),
    getPersistedSnapshot: (snapshot: EffectSnapshot<TOutput, TInput>) => snapshot,
    restoreSnapshot: (snapshot: unknown) => snapshot as EffectSnapshot<TOutput, TInput>,
  };
  return logic as unknown as PromiseActorLogic<TOutput, TInput>;
}
