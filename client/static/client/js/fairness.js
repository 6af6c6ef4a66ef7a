// Provably-fair deals checked in the browser (docs/fairness.md): the same checks as
// tools/verify_deal.py, ported to Web Crypto. `verify(answer, history)` resolves to
// the list of problems found (empty: the deal checks), each a plain English sentence
// as the Python checker prints it.
export const MERKLE_ALGORITHM = "merkle-sha256";
export const LEGACY_ALGORITHM = "sha256";
export const DECK_SIZE = 52;
const RANKS = "23456789TJQKA";
const SUITS = "shdc";
export const FULL_DECK = new Set([...RANKS].flatMap((rank) => [...SUITS].map((suit) => rank + suit)));
const HEX64 = /^[0-9a-f]{64}$/;
const encoder = new TextEncoder();

function toHex(bytes) {
  return Array.from(new Uint8Array(bytes), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** The bytes of an even-length hex text, or null when it is not hex. */
function fromHex(text) {
  if (typeof text !== "string" || text.length % 2 || !/^[0-9a-fA-F]*$/.test(text)) return null;
  const out = new Uint8Array(text.length / 2);
  for (let i = 0; i < out.length; i += 1) out[i] = parseInt(text.slice(2 * i, 2 * i + 2), 16);
  return out;
}

async function sha256(bytes) {
  return new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
}

function concat(...parts) {
  const out = new Uint8Array(parts.reduce((size, part) => size + part.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/** SHA-256 (lowercase hex) of the UTF-8 text `"<salt>:<deck joined by spaces>"` (the legacy commitment). */
export async function commitmentOf(salt, deck) {
  return toHex(await sha256(encoder.encode(`${salt}:${deck.join(" ")}`)));
}

/** The leaf (lowercase hex) of `card` at deck `position` under its own `salt`: SHA-256 of "<salt>:<position>:<card>". */
export async function leafOf(salt, position, card) {
  return toHex(await sha256(encoder.encode(`${salt}:${position}:${card}`)));
}

// RFC 6962 domain separation: a leaf node is SHA-256(0x00 ‖ leaf), an inner node SHA-256(0x01 ‖ left ‖ right).
const leafNode = (leaf) => sha256(concat(Uint8Array.of(0), fromHex(leaf)));
const innerNode = (left, right) => sha256(concat(Uint8Array.of(1), left, right));

/** The Merkle root (lowercase hex) over `leaves` in order; a node without a partner moves up unchanged. */
export async function merkleRootOf(leaves) {
  if (!leaves.length) throw new Error("a Merkle tree needs at least one leaf");
  let level = await Promise.all(leaves.map(leafNode));
  while (level.length > 1) {
    const next = [];
    for (let i = 0; i + 1 < level.length; i += 2) next.push(innerNode(level[i], level[i + 1]));
    if (level.length % 2) next.push(level[level.length - 1]);
    level = await Promise.all(next);
  }
  return toHex(level[0]);
}

/**
 * The root that `proof` (sibling hashes from the leaf up) leads to from `leaf` at `index` of a
 * tree of `size` leaves; null when the proof does not have that position's length. The sides
 * come from the index, never from the proof: a leaf can only be proven at its own position.
 */
export async function rootFromProof(leaf, index, size, proof) {
  if (!(index >= 0 && index < size)) return null;
  let node = await leafNode(leaf);
  const steps = [...proof];
  let width = size;
  while (width > 1) {
    const sibling = index ^ 1;
    if (sibling < width) {
      if (!steps.length) return null;
      const other = fromHex(steps.shift());
      if (!other) return null;
      node = index % 2 ? await innerNode(other, node) : await innerNode(node, other);
    }
    index = Math.floor(index / 2);
    width = Math.floor((width + 1) / 2);
  }
  return steps.length ? null : toHex(node);
}

const isObject = (value) => value !== null && typeof value === "object" && !Array.isArray(value);
const isPosition = (value, size = DECK_SIZE) => Number.isInteger(value) && value >= 0 && value < size;
/** `value` as Python's repr() writes it, so that a problem reads the same as tools/verify_deal.py's. */
function show(value) {
  if (value === null || value === undefined) return "None";
  if (value === true) return "True";
  if (value === false) return "False";
  if (typeof value === "string") {
    const quote = value.includes("'") && !value.includes('"') ? '"' : "'";
    const escaped = value.replace(/\\/g, "\\\\").replace(quote === "'" ? /'/g : /"/g, `\\${quote}`);
    return `${quote}${escaped}${quote}`;
  }
  if (Array.isArray(value)) return `[${value.map(show).join(", ")}]`;
  if (typeof value === "object") return `{${Object.entries(value).map(([k, v]) => `${show(k)}: ${show(v)}`).join(", ")}}`;
  return String(value);
}

/** An entry's own problems and its leaf (null when it has none). */
async function leafProblems(entry, where) {
  if (!isObject(entry)) return [[`${where}: ${show(entry)} is not a leaf`], null];
  const { position, card, salt } = entry;
  const problems = [];
  if (!isPosition(position)) problems.push(`${where}: ${show(position)} is not a deck position (0 to ${DECK_SIZE - 1})`);
  if (!FULL_DECK.has(card)) problems.push(`${where}: ${show(card)} is not a card`);
  if (typeof salt !== "string" || !HEX64.test(salt)) problems.push(`${where}: the salt is not 64 lowercase hex digits`);
  if (problems.length) return [problems, null];
  return [[], await leafOf(salt, position, card)];
}

function checkDealOrder(order, deck) {
  if (!Array.isArray(order)) return ["deal_order is not a list"];
  const problems = [];
  const seen = new Set();
  for (const entry of order) {
    const position = isObject(entry) ? entry.position : undefined;
    if (!isPosition(position, deck.length)) {
      problems.push(`deal_order entry ${show(entry)} names no deck position`);
      continue;
    }
    if (seen.has(position)) problems.push(`deck position ${position} is dealt twice`);
    seen.add(position);
    if (entry.card !== deck[position]) {
      problems.push(`deck position ${position} holds ${deck[position]}, but deal_order gives ${show(entry.card)} ` +
        `to ${entry.to ?? "None"} (slot ${entry.slot ?? "None"})`);
    }
  }
  return problems;
}

/** A house round: all 52 leaves, top first, a full permutation whose Merkle root is the commitment. */
async function checkFullReveal(answer, commitment) {
  const entries = answer.leaves;
  if (!Array.isArray(entries)) return ["leaves is not a list"];
  let problems = [];
  const leaves = [];
  for (const [index, entry] of entries.entries()) {
    const [found, leaf] = await leafProblems(entry, `leaf ${index}`);
    problems = problems.concat(found);
    if (leaf !== null && entry.position !== index) {
      problems.push(`leaf ${index} names position ${show(entry.position)}: the leaves go top first`);
    }
    if (leaf !== null) leaves.push(leaf);
  }
  if (problems.length) return problems;
  const deck = entries.map((entry) => String(entry.card));
  const distinct = new Set(deck);
  if (deck.length !== DECK_SIZE || distinct.size !== DECK_SIZE || ![...FULL_DECK].every((c) => distinct.has(c))) {
    problems.push(`the leaves hold ${deck.length} cards, ${distinct.size} of them distinct (expected the 52 cards, each once)`);
  }
  if (!leaves.length || (await merkleRootOf(leaves)) !== commitment) {
    problems.push("the Merkle root of the leaves is not the commitment: the deck is not the one committed");
  }
  return problems.concat(checkDealOrder(answer.deal_order, deck));
}

/** A poker hand: every revealed (and own) leaf proven against the commitment; distinct positions and cards. */
async function checkPokerReveal(answer, commitment) {
  const problems = [];
  const cardAt = new Map();
  const positionOf = new Map();
  for (const field of ["revealed", "yours"]) {
    const entries = answer[field] ?? [];
    if (!Array.isArray(entries)) {
      problems.push(`${field} is not a list`);
      continue;
    }
    const inField = new Set();
    for (const [index, entry] of entries.entries()) {
      const where = `${field} ${index}`;
      const [found, leaf] = await leafProblems(entry, where);
      problems.push(...found);
      if (leaf === null) continue;
      const { position, card } = entry;
      if ((await rootFromProof(leaf, position, DECK_SIZE, entry.proof || [])) !== commitment) {
        problems.push(`${where}: ${card} at position ${position} is not proven against the commitment`);
      }
      if (inField.has(position)) problems.push(`${where}: position ${position} is in ${field} twice`);
      inField.add(position);
      if (!cardAt.has(position)) cardAt.set(position, card);
      if (cardAt.get(position) !== card) problems.push(`${where}: position ${position} holds ${cardAt.get(position)} and ${card}`);
      if (!positionOf.has(card)) positionOf.set(card, position);
      if (positionOf.get(card) !== position) problems.push(`${where}: ${card} is at positions ${positionOf.get(card)} and ${position}`);
    }
  }
  return problems;
}

async function checkMerkle(answer) {
  const { commitment } = answer;
  if (typeof commitment !== "string" || !HEX64.test(commitment)) {
    return ["the commitment is not a SHA-256 Merkle root (64 lowercase hex digits)"];
  }
  if ((answer.deck_size ?? DECK_SIZE) !== DECK_SIZE) return [`the deck size is ${show(answer.deck_size)}, not ${DECK_SIZE}`];
  if ("leaves" in answer) return checkFullReveal(answer, commitment);
  if ("revealed" in answer) return checkPokerReveal(answer, commitment);
  return ["the answer reveals no leaves: the deal was still in play; fetch it again once it has ended"];
}

/** What is wrong with a fairness answer on its own (empty: nothing). */
export async function checkAnswer(answer) {
  if (!isObject(answer)) return ["the fairness answer is not a JSON object"];
  if (answer.algorithm === MERKLE_ALGORITHM) return checkMerkle(answer);
  if (answer.algorithm !== LEGACY_ALGORITHM) {
    return [`unknown algorithm ${show(answer.algorithm)} (expected ${show(MERKLE_ALGORITHM)} or ${show(LEGACY_ALGORITHM)})`];
  }
  const { salt, deck, commitment } = answer;
  if (salt == null && deck == null) {
    return ["the answer reveals no salt and deck: the round was still in play; fetch it again once it has ended"];
  }
  const problems = [];
  if (typeof salt !== "string" || !HEX64.test(salt)) problems.push("the salt is not 64 lowercase hex digits");
  if (!Array.isArray(deck) || !deck.every((card) => typeof card === "string")) {
    return [...problems, "the deck is not a list of card codes"];
  }
  const unknown = deck.filter((card) => !FULL_DECK.has(card));
  if (unknown.length) problems.push(`not cards: ${unknown.map(show).join(", ")}`);
  const distinct = new Set(deck).size;
  if (deck.length !== DECK_SIZE || distinct !== deck.length) {
    problems.push(`the deck has ${deck.length} cards, ${distinct} of them distinct (expected 52 distinct)`);
  }
  if (typeof commitment !== "string" || (await commitmentOf(String(salt), deck)) !== commitment) {
    problems.push("the commitment is not SHA-256 of salt:deck: the deck or salt is not the one committed");
  }
  return problems.concat(checkDealOrder(answer.deal_order, deck));
}

/** Every card a history shows as [to, slot, card]: a house game history's `cards` or a poker hand's `final`. */
export function shownCards(history) {
  let places;
  if ("final" in history) {
    const final = history.final || {};
    places = [["board", final.board], ...(final.players || []).map((p) => [`seat:${p.seat}`, p.cards])];
  } else {
    const cards = history.cards || {};
    places = [["dealer", cards.dealer], ["board", cards.board]];
    if ("seats" in cards) places.push(...Object.entries(cards.seats || {}).map(([id, hand]) => [`player:${id}`, hand]));
    else places.push(["shared", cards.player]);
  }
  const out = [];
  for (const [to, hand] of places) (hand || []).forEach((card, slot) => card != null && out.push([to, slot, card]));
  return out;
}

/** (to, slot) → [deck position, card] for every place a checked answer proves. */
export function provenPlaces(answer) {
  const places = new Map();
  const keyOf = (to, slot) => `${to}#${slot}`;
  if (answer.algorithm === MERKLE_ALGORITHM && !("leaves" in answer)) {
    for (const entry of [...(answer.revealed || []), ...(answer.yours || [])]) {
      places.set(keyOf(entry.to, entry.slot), [entry.position, String(entry.card)]);
    }
    return { places, keyOf };
  }
  const deck = answer.algorithm === MERKLE_ALGORITHM
    ? (answer.leaves || []).map((entry) => String(entry.card))
    : (answer.deck || []).map(String);
  for (const entry of answer.deal_order || []) {
    if (isObject(entry)) places.set(keyOf(entry.to, entry.slot), [entry.position, deck[entry.position]]);
  }
  return { places, keyOf };
}

/** Each card `history` shows came from its committed deck position. */
export function checkHistory(answer, history) {
  if (!isObject(history)) return ["the history is not a JSON object"];
  const number = history.game_number || history.hand_id;
  if (number !== answer.game_number) return [`the history is of game ${show(number)}, the answer of ${show(answer.game_number)}`];
  const { places, keyOf } = provenPlaces(answer);
  const byLeaves = answer.algorithm === MERKLE_ALGORITHM && !("leaves" in answer);
  const unproven = byLeaves ? "a place the answer proves nothing of" : "a place deal_order never deals to";
  const problems = [];
  for (const [to, slot, card] of shownCards(history)) {
    const committed = places.get(keyOf(to, slot));
    if (!committed) problems.push(`the history shows ${card} at ${to} slot ${slot}, ${unproven}`);
    else if (committed[1] !== card) {
      problems.push(`the history shows ${card} at ${to} slot ${slot}, but the committed deck dealt ${committed[1]} there ` +
        `(position ${committed[0]})`);
    }
  }
  return problems;
}

/** Every problem of an answer (and of the history, when given, once the answer checks); empty: the deal checks. */
export async function verify(answer, history = null) {
  const problems = await checkAnswer(answer);
  if (!problems.length && history !== null && history !== undefined) return checkHistory(answer, history);
  return problems;
}
