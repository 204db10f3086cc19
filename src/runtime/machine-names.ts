import type { MachineImplementationsFrom, StateMachine } from 'xstate';

/**
 * The names a machine's chart uses, read from its type: an implementation object checked against
 * them cannot miss or misspell one (the machines throw "the runtime must provide …" at run time).
 */
type NamesOf<TMachine> =
  TMachine extends StateMachine<
    any,
    any,
    any,
    infer TActor,
    infer TAction,
    infer TGuard,
    infer TDelay,
    any,
    any,
    any,
    any,
    any,
    any,
    any,
    any
  >
    ? { actors: TActor['src']; actions: TAction['type']; guards: TGuard['type']; delays: TDelay }
    : never;

type Kind = 'actors' | 'actions' | 'guards' | 'delays';
type Implementations<
  TMachine extends StateMachine<any, any, any, any, any, any, any, any, any, any, any, any, any, any, any>,
> = MachineImplementationsFrom<TMachine>;

/**
 * What the runtime owes a machine of one kind: every name the machine has, less the ones it
 * implements itself (`TOwn`, which must be names of the machine too). A new placeholder in a
 * machine is then a missing property here until the runtime provides it or names it the machine's own.
 */
export type RuntimeImplementations<
  TMachine extends StateMachine<any, any, any, any, any, any, any, any, any, any, any, any, any, any, any>,
  TKind extends Kind,
  TOwn extends NamesOf<TMachine>[TKind] = never,
> = Required<
  Pick<
    NonNullable<Implementations<TMachine>[TKind]>,
    Exclude<NamesOf<TMachine>[TKind], TOwn> & keyof NonNullable<Implementations<TMachine>[TKind]>
  >
>;
