/**
 * Hostile XML files, our own equivalents of the attack files public XML libraries keep in their
 * test data (lxml/defusedxml's xmltestdata: billion laughs, quadratic blowup, external entity
 * by file and by URL, external DTD, parameter entities, XInclude; plus deep nesting, UTF-16 and
 * an oversize file). Each is shaped as an EnvioDTE addressed to the receiver, so only the attack
 * makes it hostile.
 */
const ENVIO_OPEN =
  '<EnvioDTE xmlns="http://www.sii.cl/SiiDte" version="1.0"><SetDTE ID="SetDoc"><Caratula version="1.0"><RutEmisor>96543210-8</RutEmisor><RutEnvia>13579246-8</RutEnvia><RutReceptor>RECEPTOR</RutReceptor><FchResol>2024-01-01</FchResol><NroResol>0</NroResol><TmstFirmaEnv>2026-11-24T10:00:00</TmstFirmaEnv></Caratula>';

function envio(
  receptor: string,
  inner: string,
  prolog = '<?xml version="1.0" encoding="ISO-8859-1"?>\n',
): Buffer {
  return Buffer.from(
    `${prolog}${ENVIO_OPEN.replace('RECEPTOR', receptor)}${inner}</SetDTE></EnvioDTE>`,
    'latin1',
  );
}

export function attackFiles(receptor: string): Record<string, { xml: Buffer; reason: string }> {
  const laughs = [
    '<!ENTITY lol "lol">',
    ...Array.from(
      { length: 9 },
      (_, i) => `<!ENTITY lol${i + 1} "${`&lol${i === 0 ? '' : i};`.repeat(10)}">`,
    ),
  ].join('');
  const big = 'A'.repeat(50_000);
  return {
    'billion laughs': {
      xml: envio(receptor, '<DTE>&lol9;</DTE>', `<?xml version="1.0"?>\n<!DOCTYPE EnvioDTE [${laughs}]>\n`),
      reason: 'dtd_prohibido',
    },
    'quadratic blowup': {
      xml: envio(
        receptor,
        `<DTE>${'&a;'.repeat(10_000)}</DTE>`,
        `<?xml version="1.0"?>\n<!DOCTYPE EnvioDTE [<!ENTITY a "${big}">]>\n`,
      ),
      reason: 'dtd_prohibido',
    },
    'external entity (file)': {
      xml: envio(
        receptor,
        '<DTE>&xxe;</DTE>',
        '<?xml version="1.0"?>\n<!DOCTYPE EnvioDTE [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>\n',
      ),
      reason: 'dtd_prohibido',
    },
    'external entity (url)': {
      xml: envio(
        receptor,
        '<DTE>&xxe;</DTE>',
        '<?xml version="1.0"?>\n<!DOCTYPE EnvioDTE [<!ENTITY xxe SYSTEM "http://127.0.0.1:1/steal">]>\n',
      ),
      reason: 'dtd_prohibido',
    },
    'external DTD': {
      xml: envio(
        receptor,
        '<DTE/>',
        '<?xml version="1.0"?>\n<!DOCTYPE EnvioDTE SYSTEM "http://127.0.0.1:1/evil.dtd">\n',
      ),
      reason: 'dtd_prohibido',
    },
    'parameter entity': {
      xml: envio(
        receptor,
        '<DTE/>',
        '<?xml version="1.0"?>\n<!DOCTYPE EnvioDTE [<!ENTITY % remote SYSTEM "http://127.0.0.1:1/x.dtd"> %remote;]>\n',
      ),
      reason: 'dtd_prohibido',
    },
    'lowercase doctype': {
      xml: envio(receptor, '<DTE/>', '<?xml version="1.0"?>\n<!doctype EnvioDTE [<!entity x "y">]>\n'),
      reason: 'dtd_prohibido',
    },
    xinclude: {
      xml: envio(
        receptor,
        '<DTE xmlns:xi="http://www.w3.org/2001/XInclude"><xi:include href="file:///etc/passwd" parse="text"/></DTE>',
      ),
      reason: 'xinclude_prohibido',
    },
    'stylesheet processing instruction': {
      xml: envio(
        receptor,
        '<DTE/>',
        '<?xml version="1.0"?>\n<?xml-stylesheet href="http://127.0.0.1:1/x.xsl"?>\n',
      ),
      reason: 'instruccion_prohibida',
    },
    'deep nesting': {
      xml: envio(receptor, `${'<a>'.repeat(5_000)}${'</a>'.repeat(5_000)}`),
      reason: 'estructura_excesiva',
    },
    'utf-16': {
      xml: Buffer.concat([
        Buffer.from([0xff, 0xfe]),
        Buffer.from('<?xml version="1.0" encoding="UTF-16"?><EnvioDTE/>', 'utf16le'),
      ]),
      reason: 'codificacion_no_admitida',
    },
    'not well-formed': {
      xml: Buffer.from('<?xml version="1.0"?><EnvioDTE><SetDTE></EnvioDTE>'),
      reason: 'xml_mal_formado',
    },
    'another root': {
      xml: Buffer.from('<?xml version="1.0"?><RespuestaDTE/>'),
      reason: 'raiz_no_admitida',
    },
  };
}
