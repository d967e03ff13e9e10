import { sampleCiphertexts } from "../../store/ciphertexts";
import type { Db } from "../../store/database";
import { getSetting, insertSettingIfAbsent } from "../../store/settings";
import { ConfigError, storeName, type Config } from "../config";
import { WrongMasterKeyError, type Cipher } from "./cipher";
import { masterKeySetting } from "./master-key";

export const CANARY_SETTING = "master_key_canary";
const CANARY_TEXT = "paygate master key canary";

/**
 * Refuses to go on with a master key that is not the data dir's, before anything is
 * written with it: a wrong key would otherwise tokenize cards that no right key can
 * read, and fail later requests one by one. The proof is a canary encrypted into
 * `settings` on first open. A store from before the canary gets one, unless what it
 * already holds was encrypted with another key.
 */
export async function checkMasterKey(db: Db, cipher: Cipher, config: Pick<Config, "masterKey" | "dataDir" | "databaseUrl">): Promise<void> {
  const wrongKey = () =>
    new ConfigError(masterKeySetting(config), `it is not the master key the data in ${storeName(config)} was encrypted with; start with that key (restore it from your backup)`);
  let canary = await getSetting(db, CANARY_SETTING);
  if (canary === undefined) {
    if ((await sampleCiphertexts(db)).some((sealed) => !cipher.sealedWithThisKey(sealed))) throw wrongKey();
    await insertSettingIfAbsent(db, CANARY_SETTING, cipher.encrypt(CANARY_TEXT, CANARY_SETTING));
    canary = (await getSetting(db, CANARY_SETTING)) as string;
  }
  try {
    if (cipher.decrypt(canary, CANARY_SETTING) === CANARY_TEXT) return;
  } catch (error) {
    if (!(error instanceof WrongMasterKeyError)) throw error;
  }
  throw wrongKey();
}
