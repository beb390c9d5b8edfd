/**
 * Validating generated XML offline with xmllint (Debian's libxml2-utils; .ci/run installs it): a plist against
 * the DTD its DOCTYPE names (Apple's, resolved to the copy in the fixtures by an XML catalog), a task against the Task Scheduler schema subset in test/fixtures/service, and a plist read
 * into plain values (dict → object, array → array, true/false, integer, string) for structural assertions once the
 * DTD has said it is well formed.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const FIXTURES = path.resolve('test/fixtures/service');

/** An XML catalog sending Apple's plist DTD (by its public id and its URL) to the copy in the fixtures. */
function catalog(dir: string): string {
  const dtd = pathToFileURL(path.join(FIXTURES, 'plist-1.0.dtd')).href;
  const file = path.join(dir, 'catalog.xml');
  writeFileSync(
    file,
    `<?xml version="1.0"?>\n<catalog xmlns="urn:oasis:names:tc:entity:xmlns:xml:catalog">\n` +
      `  <public publicId="-//Apple//DTD PLIST 1.0//EN" uri="${dtd}"/>\n  <system systemId="http://www.apple.com/DTDs/PropertyList-1.0.dtd" uri="${dtd}"/>\n</catalog>\n`,
  );
  return file;
}

export function xmllint(content: string | Buffer, args: string[]): { status: number | null; output: string } {
  const dir = mkdtempSync(path.join(tmpdir(), 'gpu-share-xml-'));
  try {
    const file = path.join(dir, 'doc.xml');
    writeFileSync(file, content);
    const r = spawnSync('xmllint', ['--noout', '--nonet', ...args, file], { encoding: 'utf8', env: { ...process.env, XML_CATALOG_FILES: catalog(dir) } });
    return { status: r.status, output: `${r.stdout}${r.stderr}`.replaceAll(file, 'doc.xml').trim() };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Valid against the DTD its own DOCTYPE names (resolved offline through the catalog). */
export const validatePlist = (xml: string) => xmllint(xml, ['--valid']);
export const validateTask = (xml: Buffer | string) => xmllint(xml, ['--schema', path.join(FIXTURES, 'task-scheduler-subset.xsd')]);

export type PlistValue = string | number | boolean | PlistValue[] | { [key: string]: PlistValue };

const unescape = (s: string) => s.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&apos;/g, "'").replace(/&amp;/g, '&');

/** The plist's top value; assumes a document the DTD accepted (no attributes, no CDATA, comments outside <plist>). */
export function readPlist(xml: string): PlistValue {
  const body = xml.slice(xml.indexOf('<plist'));
  const tokens = [...body.matchAll(/<(\/?)(\w+)(\/?)>|([^<]+)/g)].filter((m) => m[4] === undefined || m[4].trim() !== '');
  let i = 0;
  const next = () => tokens[i++]!;
  const value = (): PlistValue => {
    const open = next();
    const tag = open[2]!;
    if (open[3] === '/') return tag === 'true';
    if (tag === 'dict') {
      const dict: Record<string, PlistValue> = {};
      while (!(tokens[i]![1] === '/' && tokens[i]![2] === 'dict')) {
        next(); // <key>
        const key = unescape(next()[4] ?? '');
        next(); // </key>
        dict[key] = value();
      }
      next();
      return dict;
    }
    if (tag === 'array') {
      const list: PlistValue[] = [];
      while (!(tokens[i]![1] === '/' && tokens[i]![2] === 'array')) list.push(value());
      next();
      return list;
    }
    const text = tokens[i]![4] !== undefined ? unescape(next()[4]!) : '';
    next(); // closing tag
    return tag === 'integer' ? Number(text) : text;
  };
  // <plist version="1.0"> has an attribute, which the token pattern does not match: start at the first dict.
  while (tokens[i] && tokens[i]![2] !== 'dict') i++;
  return value();
}
