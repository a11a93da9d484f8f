/**
 * The errors the engine raises on what the indexer sent, as the indexer's own: a record that
 * breaks its schema (IndexerDecodeError, naming the record's field path within its page) and
 * pagination that cannot be trusted (IndexerPagingError).
 */
import type { ListRef } from "../../engine/Source.js"
import { IndexerDecodeError, IndexerPagingError } from "../../indexer/errors.js"
import type { FieldIssue } from "../../schema/decode.js"

/** A record's field path within its page: `txs[3].height`. */
const recordPath = (arrayKey: string, index: number, path: string) =>
  `${arrayKey}[${index}]${path ? (path.startsWith("[") ? "" : ".") + path : ""}`

/** Record `index` of the page of `key` of `list` breaks its schema at `issue.path`. */
export const invalidRecord = (list: ListRef, key: string | null, index: number, issue: FieldIssue): IndexerDecodeError =>
  new IndexerDecodeError({ endpoint: list.endpoint, key, path: recordPath(list.arrayKey, index, issue.path), message: issue.message })

/** The pages of `list` cannot be trusted from the page of `key` on. */
export const untrustedPaging = (list: ListRef, key: string | null, message: string): IndexerPagingError =>
  new IndexerPagingError({ endpoint: list.endpoint, key, message })
