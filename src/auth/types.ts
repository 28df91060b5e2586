/**
 * Records of the authenticator: the agent's HTTP bodies (SPEC 2.1), its result codes, and the
 * in-process request and response records of the AuthenticationClient (SPEC 2.2).
 */

/** `result` values of the agent. 0–2 are SPEC 2.1; the others are gsf's "other errors". */
export const AuthResult = {
  ok: 0,
  authenticationFailed: 1,
  incorrectParameters: 2,
  platformUnreachable: 3,
  platformTimeout: 4,
  platformBadAnswer: 5,
  busy: 6,
  platformNotConfigured: 7,
} as const;

export type AuthResultCode = (typeof AuthResult)[keyof typeof AuthResult];

/** Body of every agent answer; `friends` only on a successful friend list. */
export interface AgentAnswer {
  result: number;
  description: string;
  friends?: string[];
}

/** Platforms the agent verifies tokens with. */
export type SocialPlatform = 'socialnet' | 'microblog';

/** Platform types of in-process requests. */
export type PlatformType = 'test' | 'ipaddress' | SocialPlatform;

export const PLATFORM_TYPES: readonly PlatformType[] = ['test', 'ipaddress', 'socialnet', 'microblog'];

/** Account authentication request (SPEC 2.2); personal-info requests have the same fields. */
export interface AuthenticationRequest {
  platform_type: PlatformType;
  user_id: string;
  /** Made by the platform's key function (`makeSocialnetAuthenticationKey`, …). */
  authentication_key: string;
}

export type PersonalInfoRequest = AuthenticationRequest;

/** Account authentication response (SPEC 2.2). `reason_code` is the agent's `result`. */
export interface AuthenticationResponse {
  success: boolean;
  reason_code: number;
  reason_description: string;
}

/** A player account in a friend list. */
export interface PlayerAccount {
  platform_type: PlatformType;
  id: string;
}

export interface PersonalInfoResponse extends AuthenticationResponse {
  friends: PlayerAccount[];
}

/** Payload of the event a callback-form call queues when the answer (or a system error) arrives. */
export interface AuthCallbackPayload<R = AuthenticationResponse, C = unknown> {
  request: AuthenticationRequest;
  /** The answer; null on a system error. */
  response: R | null;
  /** True on a system error (agent unreachable, timeout, bad answer): distinct from `success` false. */
  error: boolean;
  /** `GSF_ERR_AUTH_*` code and text of the system error, when `error` is true. */
  error_code?: string;
  error_message?: string;
  /** What the caller passed as `context`. */
  context?: C;
}
