import { Migration } from '@mikro-orm/migrations';

/**
 * Reference data: the states where stamps can be procured (ISO 3166-2:IN codes) and articles of their stamp
 * act schedules. Article ids are `<state>-<article number>`. Duty rates are not kept: the integrator states
 * the duty per stamp, as the contract says. Later changes to this data belong in new migrations.
 */
export class Migration20261122001000_StampReferenceData extends Migration {
  override async up(): Promise<void> {
    this.addSql(`insert into stamp_states (code, name) values ('DL', 'Delhi'), ('UP', 'Uttar Pradesh'), ('WB', 'West Bengal'), ('TN', 'Tamil Nadu'), ('MH', 'Maharashtra'), ('KA', 'Karnataka');`);
    this.addSql(
      `insert into stamp_articles (id, state_code, name, description) values
        ('DL-4', 'DL', 'Article 4 - Affidavit', 'Affidavit, including an affirmation or declaration in the case of persons by law allowed to affirm or declare instead of swearing. Indian Stamp Act, 1899 (Schedule I-A as applicable to Delhi).'),
        ('DL-5', 'DL', 'Article 5 - Agreement or memorandum of an agreement', 'Agreement or memorandum of an agreement not otherwise provided for. Indian Stamp Act, 1899 (Schedule I-A as applicable to Delhi).'),
        ('DL-23', 'DL', 'Article 23 - Conveyance', 'Conveyance (sale deed) of movable or immovable property, on the amount or value of the consideration. Indian Stamp Act, 1899 (Schedule I-A as applicable to Delhi).'),
        ('DL-34', 'DL', 'Article 34 - Indemnity bond', 'Indemnity bond. Indian Stamp Act, 1899 (Schedule I-A as applicable to Delhi).'),
        ('DL-35', 'DL', 'Article 35 - Lease', 'Lease, including an under-lease or sub-lease and any agreement to let or sub-let. Indian Stamp Act, 1899 (Schedule I-A as applicable to Delhi).'),
        ('DL-48', 'DL', 'Article 48 - Power of attorney', 'Power of attorney, general or special, not being a proxy. Indian Stamp Act, 1899 (Schedule I-A as applicable to Delhi).'),
        ('DL-45', 'DL', 'Article 45 - Partition', 'Instrument of partition. Indian Stamp Act, 1899 (Schedule I-A as applicable to Delhi).'),
        ('UP-4', 'UP', 'Article 4 - Affidavit', 'Affidavit, including an affirmation or declaration in the case of persons by law allowed to affirm or declare instead of swearing. Indian Stamp Act, 1899 (Schedule I-B, Uttar Pradesh).'),
        ('UP-5', 'UP', 'Article 5 - Agreement or memorandum of an agreement', 'Agreement or memorandum of an agreement not otherwise provided for. Indian Stamp Act, 1899 (Schedule I-B, Uttar Pradesh).'),
        ('UP-23', 'UP', 'Article 23 - Conveyance', 'Conveyance (sale deed) of movable or immovable property, on the amount or value of the consideration. Indian Stamp Act, 1899 (Schedule I-B, Uttar Pradesh).'),
        ('UP-34', 'UP', 'Article 34 - Indemnity bond', 'Indemnity bond. Indian Stamp Act, 1899 (Schedule I-B, Uttar Pradesh).'),
        ('UP-35', 'UP', 'Article 35 - Lease', 'Lease, including an under-lease or sub-lease and any agreement to let or sub-let. Indian Stamp Act, 1899 (Schedule I-B, Uttar Pradesh).'),
        ('UP-48', 'UP', 'Article 48 - Power of attorney', 'Power of attorney, general or special, not being a proxy. Indian Stamp Act, 1899 (Schedule I-B, Uttar Pradesh).'),
        ('WB-4', 'WB', 'Article 4 - Affidavit', 'Affidavit, including an affirmation or declaration in the case of persons by law allowed to affirm or declare instead of swearing. Indian Stamp Act, 1899 (Schedule I-A, West Bengal).'),
        ('WB-5', 'WB', 'Article 5 - Agreement or memorandum of an agreement', 'Agreement or memorandum of an agreement not otherwise provided for. Indian Stamp Act, 1899 (Schedule I-A, West Bengal).'),
        ('WB-23', 'WB', 'Article 23 - Conveyance', 'Conveyance (sale deed) of movable or immovable property, on the amount or value of the consideration. Indian Stamp Act, 1899 (Schedule I-A, West Bengal).'),
        ('WB-34', 'WB', 'Article 34 - Indemnity bond', 'Indemnity bond. Indian Stamp Act, 1899 (Schedule I-A, West Bengal).'),
        ('WB-35', 'WB', 'Article 35 - Lease', 'Lease, including an under-lease or sub-lease and any agreement to let or sub-let. Indian Stamp Act, 1899 (Schedule I-A, West Bengal).'),
        ('WB-48', 'WB', 'Article 48 - Power of attorney', 'Power of attorney, general or special, not being a proxy. Indian Stamp Act, 1899 (Schedule I-A, West Bengal).'),
        ('TN-4', 'TN', 'Article 4 - Affidavit', 'Affidavit, including an affirmation or declaration in the case of persons by law allowed to affirm or declare instead of swearing. Indian Stamp Act, 1899 (Schedule I, as amended by Tamil Nadu).'),
        ('TN-5', 'TN', 'Article 5 - Agreement or memorandum of an agreement', 'Agreement or memorandum of an agreement not otherwise provided for. Indian Stamp Act, 1899 (Schedule I, as amended by Tamil Nadu).'),
        ('TN-23', 'TN', 'Article 23 - Conveyance', 'Conveyance (sale deed) of movable or immovable property, on the amount or value of the consideration. Indian Stamp Act, 1899 (Schedule I, as amended by Tamil Nadu).'),
        ('TN-34', 'TN', 'Article 34 - Indemnity bond', 'Indemnity bond. Indian Stamp Act, 1899 (Schedule I, as amended by Tamil Nadu).'),
        ('TN-35', 'TN', 'Article 35 - Lease', 'Lease, including an under-lease or sub-lease and any agreement to let or sub-let. Indian Stamp Act, 1899 (Schedule I, as amended by Tamil Nadu).'),
        ('TN-48', 'TN', 'Article 48 - Power of attorney', 'Power of attorney, general or special, not being a proxy. Indian Stamp Act, 1899 (Schedule I, as amended by Tamil Nadu).'),
        ('MH-4', 'MH', 'Article 4 - Affidavit', 'Affidavit, including an affirmation or declaration. Maharashtra Stamp Act (Schedule I).'),
        ('MH-5', 'MH', 'Article 5 - Agreement or its records or memorandum of an agreement', 'Agreement or its records or memorandum of an agreement not otherwise provided for. Maharashtra Stamp Act (Schedule I).'),
        ('MH-25', 'MH', 'Article 25 - Conveyance', 'Conveyance of movable or immovable property, on the market value or consideration, whichever is higher. Maharashtra Stamp Act (Schedule I).'),
        ('MH-34', 'MH', 'Article 34 - Indemnity bond', 'Indemnity bond. Maharashtra Stamp Act (Schedule I).'),
        ('MH-36', 'MH', 'Article 36 - Lease', 'Lease, including an under-lease or sub-lease and leave and licence agreements. Maharashtra Stamp Act (Schedule I).'),
        ('MH-48', 'MH', 'Article 48 - Power of attorney', 'Power of attorney, general or special. Maharashtra Stamp Act (Schedule I).'),
        ('KA-4', 'KA', 'Article 4 - Affidavit', 'Affidavit, including an affirmation or declaration. Karnataka Stamp Act, 1957 (Schedule).'),
        ('KA-5', 'KA', 'Article 5 - Agreement or memorandum of an agreement', 'Agreement or memorandum of an agreement not otherwise provided for. Karnataka Stamp Act, 1957 (Schedule).'),
        ('KA-20', 'KA', 'Article 20 - Conveyance', 'Conveyance of movable or immovable property. Karnataka Stamp Act, 1957 (Schedule).'),
        ('KA-30', 'KA', 'Article 30 - Lease', 'Lease, including an under-lease or sub-lease and any agreement to let or sub-let. Karnataka Stamp Act, 1957 (Schedule).'),
        ('KA-41', 'KA', 'Article 41 - Power of attorney', 'Power of attorney, general or special. Karnataka Stamp Act, 1957 (Schedule).');`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`delete from stamp_articles;`);
    this.addSql(`delete from stamp_states;`);
  }
}
