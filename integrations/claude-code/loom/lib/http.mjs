// The HTTP call of Loom's ops every hook makes: POST {url}/v1/{op} with the token, the answer's
// JSON, or a CallError saying why (its status and the field a 422 names). Node 18 or newer.

export const CALL_SECONDS = 5;

export class CallError extends Error {
  constructor(message, status = null, field = null) {
    super(message);
    this.status = status;
    this.field = field;
  }
}

// `seconds`: how long to wait for the answer (a read-path hook waits less: lib/memory.mjs).
export async function call(config, op, body, seconds = CALL_SECONDS) {
  const url = `${config.url}/v1/${op}`;
  const headers = { "content-type": "application/json" };
  if (config.token) headers.authorization = `Bearer ${config.token}`;
  const scoped = config.namespace ? { namespace: config.namespace, ...body } : body;
  let response;
  try {
    response = await fetch(url, {
      method: "POST",
      headers,
      body: JSON.stringify(scoped),
      signal: AbortSignal.timeout(seconds * 1000),
    });
  } catch (error) {
    const reason = error.name === "TimeoutError" ? `no answer in ${seconds} s` : error.cause?.code || error.message;
    throw new CallError(`cannot reach ${url}: ${reason}`);
  }
  const text = await response.text();
  let answer = null;
  try {
    answer = JSON.parse(text);
  } catch {
    // reported below
  }
  if (!response.ok) {
    const hint = response.status === 401 || response.status === 403 ? " (check LOOM_TOKEN)" : "";
    const reason = answer?.error || text.slice(0, 200);
    throw new CallError(`HTTP ${response.status} from ${url}${hint}: ${reason}`, response.status, answer?.field ?? null);
  }
  if (!answer || typeof answer !== "object") throw new CallError(`unexpected answer from ${url}`);
  return answer;
}
