import { Migration } from '@mikro-orm/migrations';

/**
 * Reference data for all 36 states and union territories (28 states, 8 union territories, as of 2024), and
 * for every state at least the eleven kinds of instrument in common use: affidavit, agreement, bond,
 * conveyance, gift, indemnity bond, lease, leave and licence, mortgage, partnership, power of attorney.
 *
 * State codes are the two letters printed on e-stamp certificates (IN-DL..., IN-KA...), mostly also on vehicle
 * plates: ISO 3166-2:IN except Telangana, which is TG (the state's own abbreviation since 2024) where ISO has TS.
 * Article ids stay `<state>-<article number>`; where a state follows the Indian Stamp Act, 1899 its articles
 * carry Schedule I's numbers (as far as known, the state schedules amend rates, not numbers), and where a state
 * has its own Act they carry that Act's numbers, with the rows whose number was inferred rather than read
 * saying so.
 * Only the common articles are seeded, for every state: no state's full schedule.
 *
 * Rows of the earlier migration keep their ids and names (orders may name them), but for one correction: MH-34
 * was seeded as 'Article 34 - Indemnity bond' in error (in Maharashtra's Schedule I, Article 34 is Gift and the
 * indemnity bond is Article 35, MH-35, added here), and becomes 'Article 34 - Gift'. Orders store only the
 * article id; a certificate already rendered keeps the text it was rendered with (docs/stamp-reference-data.md).
 * A few other descriptions gain a sentence (how leave and licence is stamped).
 * down() gives MH-34 and those descriptions their old text back, and removes exactly the states and articles
 * added here.
 */

type ArticleRow = [id: string, name: string, description: string];
type NameAndDescription = { name: string; description: string };

/** The common articles in the words of the Indian Stamp Act, 1899, Schedule I, by article number. */
const ISA_ARTICLES: [number, string, string][] = [
  [
    4,
    'Affidavit',
    'Affidavit, including an affirmation or declaration in the case of persons by law allowed to affirm or declare instead of swearing.',
  ],
  [5, 'Agreement or memorandum of an agreement', 'Agreement or memorandum of an agreement not otherwise provided for.'],
  [15, 'Bond', 'Bond (as defined by section 2(5)), not being a debenture and not otherwise provided for.'],
  [23, 'Conveyance', 'Conveyance (sale deed) of movable or immovable property, not being a transfer otherwise provided for.'],
  [33, 'Gift', 'Gift, instrument of, not being a settlement or will or transfer.'],
  [34, 'Indemnity bond', 'Indemnity bond.'],
  [
    35,
    'Lease',
    'Lease, including an under-lease or sub-lease and any agreement to let or sub-let. Leave and licence: no article of its own; ' +
      'section 2(16) counts a written undertaking to occupy or pay rent for immovable property as a lease, which is how a ' +
      'leave and licence agreement is usually stamped.',
  ],
  [
    40,
    'Mortgage deed',
    'Mortgage deed, not being an agreement relating to deposit of title deeds, pawn or pledge, a bottomry bond, a mortgage of a crop, a respondentia bond or a security bond.',
  ],
  [46, 'Partnership', 'Partnership: instrument of partnership, and its dissolution.'],
  [48, 'Power of attorney', 'Power of attorney, general or special, not being a proxy.'],
];

/** The states that follow the Indian Stamp Act, 1899: code, name, and the schedule as it applies there. */
const ISA_STATES: [code: string, name: string, schedule: string][] = [
  ['AN', 'Andaman and Nicobar Islands', 'Schedule I as in force in Andaman and Nicobar Islands'],
  ['AP', 'Andhra Pradesh', 'Schedule I-A, Andhra Pradesh'],
  ['AR', 'Arunachal Pradesh', 'Schedule I as in force in Arunachal Pradesh'],
  ['AS', 'Assam', 'Schedule I as amended for Assam'],
  ['BR', 'Bihar', 'Schedule I as amended for Bihar'],
  ['CG', 'Chhattisgarh', 'Schedule I-A, Chhattisgarh'],
  ['CH', 'Chandigarh', 'Schedule I as in force in Chandigarh'],
  ['DH', 'Dadra and Nagar Haveli and Daman and Diu', 'Schedule I as in force in Dadra and Nagar Haveli and Daman and Diu'],
  ['GA', 'Goa', 'Schedule I-A, Goa'],
  ['HP', 'Himachal Pradesh', 'Schedule I as amended for Himachal Pradesh'],
  ['HR', 'Haryana', 'Schedule I as amended for Haryana'],
  ['JH', 'Jharkhand', 'Schedule I as amended for Jharkhand'],
  ['JK', 'Jammu and Kashmir', 'Schedule I, in force in the union territory since the Jammu and Kashmir Reorganisation Act, 2019'],
  ['LA', 'Ladakh', 'Schedule I, in force in the union territory since the Jammu and Kashmir Reorganisation Act, 2019'],
  ['LD', 'Lakshadweep', 'Schedule I as in force in Lakshadweep'],
  ['MN', 'Manipur', 'Schedule I as in force in Manipur'],
  ['ML', 'Meghalaya', 'Schedule I as in force in Meghalaya'],
  ['MP', 'Madhya Pradesh', 'Schedule I-A, Madhya Pradesh'],
  ['MZ', 'Mizoram', 'Schedule I as in force in Mizoram'],
  ['NL', 'Nagaland', 'Schedule I as in force in Nagaland'],
  ['OD', 'Odisha', 'Schedule I as amended for Odisha'],
  ['PB', 'Punjab', 'Schedule I as amended for Punjab'],
  ['PY', 'Puducherry', 'Schedule I as in force in Puducherry'],
  ['SK', 'Sikkim', 'Schedule I as in force in Sikkim'],
  ['TG', 'Telangana', 'Schedule I-A, Telangana, adapted from Andhra Pradesh'],
  ['TR', 'Tripura', 'Schedule I as in force in Tripura'],
  ['UK', 'Uttarakhand', 'Schedule I as amended for Uttarakhand'],
];

function isaSource(schedule: string): string {
  return `Indian Stamp Act, 1899 (${schedule}; article numbers of Schedule I).`;
}

function isaArticles(code: string, source: string, numbers?: number[]): ArticleRow[] {
  return ISA_ARTICLES.filter(([number]) => !numbers || numbers.includes(number)).map(([number, title, text]) => [
    `${code}-${number}`,
    `Article ${number} - ${title}`,
    `${text} ${source}`,
  ]);
}

const INFERRED = ' Article number inferred from the order of the Schedule, not read from its notified text.';
const OWN_ACT_LEAVE_AND_LICENCE =
  ' Leave and licence: no article of its own; the definition of lease covers a written undertaking to occupy or pay rent ' +
  'for immovable property, which is how a leave and licence agreement is usually stamped.';

/** The states with a Stamp Act of their own, in that Act's numbering. */
const OWN_ACT_ARTICLES: ArticleRow[] = [
  // Gujarat Stamp Act, 1958 (the Bombay Stamp Act, 1958 as it applies in Gujarat), Schedule I.
  ['GJ-4', 'Article 4 - Affidavit', 'Affidavit, including an affirmation or declaration. Gujarat Stamp Act, 1958 (Schedule I).'],
  [
    'GJ-5',
    'Article 5 - Agreement or memorandum of an agreement or its records',
    'Agreement or memorandum of an agreement or its records, not otherwise provided for. Gujarat Stamp Act, 1958 (Schedule I).',
  ],
  ['GJ-14', 'Article 14 - Bond', 'Bond, not being a debenture and not otherwise provided for. Gujarat Stamp Act, 1958 (Schedule I).' + INFERRED],
  ['GJ-20', 'Article 20 - Conveyance', 'Conveyance (sale deed) of movable or immovable property. Gujarat Stamp Act, 1958 (Schedule I).'],
  ['GJ-28', 'Article 28 - Gift', 'Gift, instrument of, not being a settlement or will or transfer. Gujarat Stamp Act, 1958 (Schedule I).'],
  ['GJ-29', 'Article 29 - Indemnity bond', 'Indemnity bond. Gujarat Stamp Act, 1958 (Schedule I).' + INFERRED],
  [
    'GJ-30',
    'Article 30 - Lease',
    'Lease, including an under-lease or sub-lease and any agreement to let or sub-let. Gujarat Stamp Act, 1958 (Schedule I).' +
      OWN_ACT_LEAVE_AND_LICENCE +
      INFERRED,
  ],
  [
    'GJ-36',
    'Article 36 - Mortgage deed',
    'Mortgage deed, not being an agreement relating to deposit of title deeds, pawn or pledge, a bottomry bond, a mortgage of a crop, a respondentia bond or a security bond. Gujarat Stamp Act, 1958 (Schedule I).',
  ],
  [
    'GJ-44',
    'Article 44 - Partnership',
    'Partnership: instrument of partnership, alteration of its constitution, and its dissolution. Gujarat Stamp Act, 1958 (Schedule I).',
  ],
  [
    'GJ-45',
    'Article 45 - Power of attorney',
    'Power of attorney, general or special, not being a proxy. Gujarat Stamp Act, 1958 (Schedule I).' + INFERRED,
  ],

  // Kerala Stamp Act, 1959, Schedule (as renumbered in 1969).
  ['KL-4', 'Article 4 - Affidavit', 'Affidavit, including an affirmation or declaration. Kerala Stamp Act, 1959 (Schedule).' + INFERRED],
  [
    'KL-5',
    'Article 5 - Agreement or memorandum of an agreement',
    'Agreement or memorandum of an agreement not otherwise provided for. Kerala Stamp Act, 1959 (Schedule).' + INFERRED,
  ],
  ['KL-13', 'Article 13 - Bond', 'Bond, not being a debenture and not otherwise provided for. Kerala Stamp Act, 1959 (Schedule).' + INFERRED],
  [
    'KL-21',
    'Article 21 - Conveyance',
    'Conveyance (sale deed) of movable or immovable property. Kerala Stamp Act, 1959 (Schedule). The registration department ' +
      'charges sale deeds under item 21 or 22 of the Schedule as the case may be: check which one applies.',
  ],
  ['KL-31', 'Article 31 - Gift', 'Gift, instrument of, not being a settlement or will or transfer. Kerala Stamp Act, 1959 (Schedule).' + INFERRED],
  ['KL-32', 'Article 32 - Indemnity bond', 'Indemnity bond. Kerala Stamp Act, 1959 (Schedule).' + INFERRED],
  [
    'KL-33',
    'Article 33 - Lease',
    'Lease, including an under-lease or sub-lease and any agreement to let or sub-let. Kerala Stamp Act, 1959 (Schedule).' +
      OWN_ACT_LEAVE_AND_LICENCE +
      INFERRED,
  ],
  [
    'KL-37',
    'Article 37 - Mortgage deed',
    'Mortgage deed, not being an agreement relating to deposit of title deeds, pawn or pledge, a bottomry bond, a mortgage of a crop, a respondentia bond or a security bond. Kerala Stamp Act, 1959 (Schedule).' +
      INFERRED,
  ],
  [
    'KL-43',
    'Article 43 - Partnership',
    'Partnership: instrument of partnership, and its dissolution. Kerala Stamp Act, 1959 (Schedule).' + INFERRED,
  ],
  [
    'KL-44',
    'Article 44 - Power of attorney',
    'Power of attorney, general or special, not being a proxy. Kerala Stamp Act, 1959 (Schedule).' + INFERRED,
  ],

  // Rajasthan Stamp Act, 1998, Schedule.
  ['RJ-4', 'Article 4 - Affidavit', 'Affidavit, including an affirmation or declaration. Rajasthan Stamp Act, 1998 (Schedule).'],
  [
    'RJ-5',
    'Article 5 - Agreement or memorandum of an agreement',
    'Agreement or memorandum of an agreement not otherwise provided for. Rajasthan Stamp Act, 1998 (Schedule).',
  ],
  ['RJ-13', 'Article 13 - Bond', 'Bond, not being a debenture and not otherwise provided for. Rajasthan Stamp Act, 1998 (Schedule).' + INFERRED],
  ['RJ-21', 'Article 21 - Conveyance', 'Conveyance (sale deed) of movable or immovable property. Rajasthan Stamp Act, 1998 (Schedule).'],
  ['RJ-31', 'Article 31 - Gift', 'Gift, instrument of, not being a settlement or will or transfer. Rajasthan Stamp Act, 1998 (Schedule).' + INFERRED],
  ['RJ-32', 'Article 32 - Indemnity bond', 'Indemnity bond. Rajasthan Stamp Act, 1998 (Schedule).' + INFERRED],
  [
    'RJ-33',
    'Article 33 - Lease',
    'Lease, including an under-lease or sub-lease and any agreement to let or sub-let. Rajasthan Stamp Act, 1998 (Schedule).' +
      OWN_ACT_LEAVE_AND_LICENCE +
      INFERRED,
  ],
  [
    'RJ-37',
    'Article 37 - Mortgage deed',
    'Mortgage deed, not being an agreement relating to deposit of title deeds, pawn or pledge, a bottomry bond, a mortgage of a crop, a respondentia bond or a security bond. Rajasthan Stamp Act, 1998 (Schedule).' +
      INFERRED,
  ],
  [
    'RJ-43',
    'Article 43 - Partnership',
    'Partnership: instrument of partnership, and its dissolution. Rajasthan Stamp Act, 1998 (Schedule).' + INFERRED,
  ],
  ['RJ-44', 'Article 44 - Power of attorney', 'Power of attorney, general or special, not being a proxy. Rajasthan Stamp Act, 1998 (Schedule).'],

  // Additions to Maharashtra (Maharashtra Stamp Act, Schedule I).
  ['MH-13', 'Article 13 - Bond', 'Bond, not being a debenture and not otherwise provided for. Maharashtra Stamp Act (Schedule I).'],
  [
    'MH-35',
    'Article 35 - Indemnity bond',
    'Indemnity bond. Maharashtra Stamp Act (Schedule I). Listed earlier under MH-34 in error; MH-34 is Article 34, Gift.',
  ],
  [
    'MH-36A',
    'Article 36A - Leave and licence',
    'Leave and licence agreement, or its records. Maharashtra Stamp Act (Schedule I).',
  ],
  [
    'MH-40',
    'Article 40 - Mortgage deed',
    'Mortgage deed, not being an agreement relating to deposit of title deeds, pawn, pledge or hypothecation, a bottomry bond, a mortgage of a crop, a respondentia bond or a security bond. Maharashtra Stamp Act (Schedule I).',
  ],
  [
    'MH-47',
    'Article 47 - Partnership',
    'Partnership, including a limited liability partnership or joint venture: instrument of partnership, and dissolution or retirement of a partner. Maharashtra Stamp Act (Schedule I).',
  ],

  // Additions to Karnataka (Karnataka Stamp Act, 1957, Schedule).
  ['KA-12', 'Article 12 - Bond', 'Bond, not being a debenture and not otherwise provided for. Karnataka Stamp Act, 1957 (Schedule).'],
  ['KA-28', 'Article 28 - Gift', 'Gift, instrument of, not being a settlement or will or transfer. Karnataka Stamp Act, 1957 (Schedule).' + INFERRED],
  ['KA-29', 'Article 29 - Indemnity bond', 'Indemnity bond. Karnataka Stamp Act, 1957 (Schedule).'],
  [
    'KA-34',
    'Article 34 - Mortgage deed',
    'Mortgage deed, not being an agreement relating to deposit of title deeds, pawn or pledge, a bottomry bond, a mortgage of a crop, a respondentia bond or a security bond. Karnataka Stamp Act, 1957 (Schedule).',
  ],
  ['KA-40', 'Article 40 - Partnership', 'Partnership: instrument of partnership, and its dissolution. Karnataka Stamp Act, 1957 (Schedule).'],
];

/** The earlier migration's Indian Stamp Act states, given the common articles they lacked (bond, gift, mortgage, partnership). */
const EARLIER_ISA_STATES: [code: string, source: string][] = [
  ['DL', 'Indian Stamp Act, 1899 (Schedule I-A as applicable to Delhi).'],
  ['TN', 'Indian Stamp Act, 1899 (Schedule I, as amended by Tamil Nadu).'],
  ['UP', 'Indian Stamp Act, 1899 (Schedule I-B, Uttar Pradesh).'],
  ['WB', 'Indian Stamp Act, 1899 (Schedule I-A, West Bengal).'],
];

const ISA_LEAVE_AND_LICENCE =
  ' Leave and licence: no article of its own; section 2(16) counts a written undertaking to occupy or pay rent for immovable ' +
  'property as a lease, which is how a leave and licence agreement is usually stamped.';

/** Descriptions of the earlier migration's rows that gain a sentence: [id, text before, text after]. */
const DESCRIPTION_CHANGES: [id: string, before: string, after: string][] = [
  ...EARLIER_ISA_STATES.map(([code, source]): [string, string, string] => {
    const before = `Lease, including an under-lease or sub-lease and any agreement to let or sub-let. ${source}`;
    return [`${code}-35`, before, before + ISA_LEAVE_AND_LICENCE];
  }),
  [
    'KA-30',
    'Lease, including an under-lease or sub-lease and any agreement to let or sub-let. Karnataka Stamp Act, 1957 (Schedule).',
    'Lease, including an under-lease or sub-lease and any agreement to let or sub-let. Karnataka Stamp Act, 1957 (Schedule).' +
      OWN_ACT_LEAVE_AND_LICENCE,
  ],
  [
    'MH-36',
    'Lease, including an under-lease or sub-lease and leave and licence agreements. Maharashtra Stamp Act (Schedule I).',
    'Lease, including an under-lease or sub-lease and leave and licence agreements. Maharashtra Stamp Act (Schedule I). A leave and licence agreement has an article of its own, Article 36A (MH-36A).',
  ],
];

/**
 * MH-34, renamed: the earlier migration seeded it as indemnity bond, but Article 34 of Maharashtra's Schedule I is
 * Gift (its indemnity bond is Article 35, MH-35). Orders keep naming the id; the name and description change.
 */
const MH_34: { id: string; before: NameAndDescription; after: NameAndDescription } = {
  id: 'MH-34',
  before: { name: 'Article 34 - Indemnity bond', description: 'Indemnity bond. Maharashtra Stamp Act (Schedule I).' },
  after: {
    name: 'Article 34 - Gift',
    description:
      'Gift, instrument of, not being a settlement or will or transfer. Maharashtra Stamp Act (Schedule I). ' +
      'The first seed named this id indemnity bond in error; the indemnity bond is Article 35 (MH-35).',
  },
};

const NEW_STATES: [code: string, name: string][] = [
  ...ISA_STATES.map(([code, name]): [string, string] => [code, name]),
  ['GJ', 'Gujarat'],
  ['KL', 'Kerala'],
  ['RJ', 'Rajasthan'],
];

const NEW_ARTICLES: ArticleRow[] = [
  ...ISA_STATES.flatMap(([code, , schedule]) => isaArticles(code, isaSource(schedule))),
  ...EARLIER_ISA_STATES.flatMap(([code, source]) => isaArticles(code, source, [15, 33, 40, 46])),
  ...OWN_ACT_ARTICLES,
];

function text(value: string): string {
  return `'${value.replace(/'/g, "''")}'`;
}

function list(values: string[]): string {
  return values.map(text).join(', ');
}

/** Sets MH-34's name and description to `to` if they are still `from`. */
function renameMh34(from: NameAndDescription, to: NameAndDescription): string {
  return (
    `update stamp_articles set name = ${text(to.name)}, description = ${text(to.description)} ` +
    `where id = ${text(MH_34.id)} and name = ${text(from.name)} and description = ${text(from.description)};`
  );
}

export class Migration20261124010000_AllStatesReferenceData extends Migration {
  override async up(): Promise<void> {
    this.addSql(`insert into stamp_states (code, name) values ${NEW_STATES.map(([code, name]) => `(${list([code, name])})`).join(', ')};`);
    this.addSql(
      `insert into stamp_articles (id, state_code, name, description) values\n  ${NEW_ARTICLES.map(
        ([id, name, description]) => `(${list([id, id.slice(0, id.indexOf('-')), name, description])})`,
      ).join(',\n  ')};`,
    );
    for (const [id, before, after] of DESCRIPTION_CHANGES) {
      this.addSql(`update stamp_articles set description = ${text(after)} where id = ${text(id)} and description = ${text(before)};`);
    }
    this.addSql(renameMh34(MH_34.before, MH_34.after));
  }

  override async down(): Promise<void> {
    this.addSql(renameMh34(MH_34.after, MH_34.before));
    for (const [id, before, after] of DESCRIPTION_CHANGES) {
      this.addSql(`update stamp_articles set description = ${text(before)} where id = ${text(id)} and description = ${text(after)};`);
    }
    this.addSql(`delete from stamp_articles where id in (${list(NEW_ARTICLES.map(([id]) => id))});`);
    this.addSql(`delete from stamp_states where code in (${list(NEW_STATES.map(([code]) => code))});`);
  }
}
