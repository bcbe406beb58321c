// Error constructors shared by MemoryStore and SqliteStore, so both stores
// report the same conditions with the same tags and messages.
import { SessionNotFound, StoreConflict, StoreError } from "../store.ts";

export const sessionNotFound = (sessionId: string): SessionNotFound =>
  new SessionNotFound({ sessionId, message: `session ${sessionId} not found` });

export const revisionConflict = (sessionId: string, expected: number, actual: number): StoreConflict =>
  new StoreConflict({
    sessionId,
    reason: "revision",
    expected,
    actual,
    message: `session ${sessionId} moved: expected head revision ${expected}, found ${actual}; re-read the session and retry`,
  });

export const turnHashConflict = (sessionId: string, turnId: string): StoreConflict =>
  new StoreConflict({
    sessionId,
    reason: "turnHash",
    message: `turn ${turnId} of session ${sessionId} was already committed with different content`,
  });

export const sessionExists = (sessionId: string): StoreError =>
  new StoreError({ message: `session ${sessionId} already exists` });

export const nodeNotFound = (nodeId: string): StoreError =>
  new StoreError({ message: `node ${nodeId} not found` });

export const duplicateNode = (nodeId: string): StoreError =>
  new StoreError({ message: `node ${nodeId} already exists (node ids are globally unique)` });

export const foreignNode = (nodeId: string, nodeSession: string, sessionId: string): StoreError =>
  new StoreError({
    message: `node ${nodeId} belongs to session ${nodeSession}, not to the committing session ${sessionId}`,
  });

export const forkWithoutOrigin = (sessionId: string): StoreError =>
  new StoreError({ message: `fork ${sessionId} has no origin (session.origin must be set)` });

/** Stamp key of a committed turn. */
export const stampKey = (sessionId: string, turnId: string): string => `${sessionId}\u0000${turnId}`;
